/**
 * `POST /selector`: checks a message selector and, given a message in the JSON form, evaluates it
 * with the explanation tree `jms-gateway selector eval` prints; the console's selector tester
 * uses it. An invalid selector is an answer, not a failed request: `valid: false` with the error
 * and its 1-based column, so a caret can be put under it.
 */
import { Type } from 'typebox';
import { InvalidSelectorError } from '../jms/errors.js';
import { messageFromJson } from '../jms/message/message-json.js';
import { type Explanation, type MessageSelector, parseSelector } from '../jms/selector/index.js';
import { ref, Message } from './schemas.js';

/** What `POST /selector` answers. */
export type SelectorAnswer =
  | { valid: false; error: string; column: number }
  | { valid: true; empty: boolean; explanation?: Explanation; selected?: boolean };

/** Largest request: a selector and a message to try it on (1 MiB, for an XML body). */
export const SELECTOR_BODY_BYTES = 1024 * 1024;

export const SelectorRequest = Type.Object(
  {
    selector: Type.String({ description: 'The selector, as a consumer or bridge would give it.' }),
    message: Type.Optional({ ...ref(Message), description: 'A message to evaluate it against.' }),
  },
  { additionalProperties: false },
);

/** One node of the explanation tree (recursive: a node's children are nodes). */
const ExplanationNode = Type.Object(
  {
    text: Type.String({ description: 'The sub-expression as written.' }),
    value: Type.String({ description: 'TRUE, FALSE or UNKNOWN for conditions; the value otherwise.' }),
    condition: Type.Boolean(),
    type: Type.Optional(
      Type.String({ description: 'For identifiers: header, the property type, or absent.' }),
    ),
    xpath: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'What an XPath found.' }),
    ),
    children: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: 'Sub-expressions, each a node of the same shape.',
    }),
  },
  { description: 'How the selector evaluated against the message.' },
);

export const SelectorAnswerSchema = Type.Union(
  [
    Type.Object(
      {
        valid: Type.Literal(false),
        error: Type.String({ description: 'What is wrong with the selector.' }),
        column: Type.Integer({ minimum: 1, description: 'The 1-based column of the fault.' }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        valid: Type.Literal(true),
        empty: Type.Boolean({ description: 'True when the selector selects everything (blank).' }),
        explanation: Type.Optional(ExplanationNode),
        selected: Type.Optional(Type.Boolean({ description: 'Whether the message is selected.' })),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description: 'Whether the selector is valid, and how it evaluated against the message if one was given.',
  },
);

/** Checks `selector` and evaluates it against `message` (the JSON form) when one is given. */
export function checkSelector(selectorText: string, message: unknown): SelectorAnswer {
  let selector: MessageSelector;
  try {
    selector = parseSelector(selectorText);
  } catch (error) {
    if (!(error instanceof InvalidSelectorError)) throw error;
    return { valid: false, error: error.message, column: error.column };
  }
  const answer: SelectorAnswer = { valid: true, empty: selector.text === null };
  if (message !== undefined) {
    const explanation = selector.explain(messageFromJson(message));
    answer.explanation = explanation;
    answer.selected = explanation.value === 'TRUE';
  }
  return answer;
}
