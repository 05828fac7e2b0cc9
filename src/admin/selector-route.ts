/**
 * `POST /selector`: checks a message selector and, given a message in the JSON form, evaluates it
 * with the explanation tree `jms-gateway selector eval` prints; the console's selector tester
 * uses it. An invalid selector is an answer, not a failed request: `valid: false` with the error
 * and its 1-based column, so a caret can be put under it.
 */
import { InvalidSelectorError } from '../jms/errors.js';
import { messageFromJson } from '../jms/message/message-json.js';
import { type Explanation, type MessageSelector, parseSelector } from '../jms/selector/index.js';
import { HttpError, expectObject } from './http-util.js';
import type { Route } from './routes.js';

/** What `POST /selector` answers. */
export type SelectorAnswer =
  | { valid: false; error: string; column: number }
  | { valid: true; empty: boolean; explanation?: Explanation; selected?: boolean };

/** Largest request: a selector and a message to try it on (1 MiB, for an XML body). */
const SELECTOR_BODY_BYTES = 1024 * 1024;

export const selectorRoute: Route = {
  method: 'POST',
  path: '/selector',
  summary:
    'Checks a selector and evaluates it against an optional message: {"selector":"...","message":{...}}; an invalid selector answers {"valid":false,"error":...,"column":n}.',
  maxBodyBytes: SELECTOR_BODY_BYTES,
  async handle({ body }) {
    const input = expectObject(await body(), 'selector');
    if (typeof input.selector !== 'string') throw new HttpError(400, 'selector: expected a string');
    let selector: MessageSelector;
    try {
      selector = parseSelector(input.selector);
    } catch (error) {
      if (!(error instanceof InvalidSelectorError)) throw error;
      const answer: SelectorAnswer = { valid: false, error: error.message, column: error.column };
      return { body: answer };
    }
    const answer: SelectorAnswer = { valid: true, empty: selector.text === null };
    if (input.message !== undefined) {
      const explanation = selector.explain(messageFromJson(input.message));
      answer.explanation = explanation;
      answer.selected = explanation.value === 'TRUE';
    }
    return { body: answer };
  },
};
