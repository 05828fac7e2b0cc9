/**
 * The selector tester: checks a selector (the error with a caret under its column) and evaluates
 * it against a message, pasted as JSON or taken from a browsed destination, with the explanation
 * tree `jms-gateway selector eval` prints: every part of the selector and its value.
 */
import { api } from './api.js';
import { caret } from './caret.js';
import { fill, h, notify } from './dom.js';
import type { Explanation, MessageJson, SelectorAnswer } from './types.js';

/** A browsed message handed to the tester ("Try a selector on it"). */
let handed: MessageJson | undefined;

export function offerToSelectorTester(message: MessageJson): void {
  handed = message;
  location.hash = '#/selector';
}

const EXAMPLE: MessageJson = {
  type: 'text',
  headers: { JMSPriority: 4, JMSType: 'order' },
  properties: { region: 'eu', amount: 120 },
  body: '<order id="7"/>',
};

function details(node: Explanation): string {
  const xpath = node.xpath;
  if (xpath !== undefined) {
    if (xpath.body === 'not-text') return 'the body is not text: XPath not evaluated';
    if (xpath.limit !== undefined)
      return `XPath ${xpath.expression} not answered: over the XPath limit '${xpath.limit}'`;
    if (xpath.body === 'malformed')
      return 'the body is not well-formed XML or has a DTD: XPath not evaluated';
    if (xpath.found === undefined) return `XPath ${xpath.expression}`;
    return xpath.found === null
      ? `XPath ${xpath.expression} found nothing with a value`
      : `XPath ${xpath.expression} found ${JSON.stringify(xpath.found)}`;
  }
  if (node.type === undefined) return '';
  if (node.type === 'header') return 'header';
  if (node.type === 'absent') return 'no such property';
  return `${node.type} property`;
}

function tree(node: Explanation): HTMLLIElement {
  const note = details(node);
  return h(
    'li',
    {},
    h('code', {}, node.text || '(empty selector)'),
    ' ⇒ ',
    h('strong', { class: `value value-${node.value}` }, node.value),
    note ? h('span', { class: 'hint' }, ` (${note})`) : null,
    node.children.length > 0 ? h('ul', {}, ...node.children.map(tree)) : null,
  );
}

export function showSelectorTester(main: HTMLElement): void {
  const selector = h('textarea', { id: 'selector-text', rows: 3, cols: 80, spellcheck: 'false' });
  const message = h('textarea', { id: 'selector-message', rows: 12, cols: 80, spellcheck: 'false' });
  message.value = JSON.stringify(handed ?? EXAMPLE, null, 2);
  const from = handed ? `message ${String(handed.headers.JMSMessageID)}` : 'an example message';
  handed = undefined;
  const result = h('div', { id: 'selector-result', 'aria-live': 'polite' });

  const run = async (evaluate: boolean) => {
    const body: Record<string, unknown> = { selector: selector.value };
    if (evaluate) {
      try {
        body.message = JSON.parse(message.value) as unknown;
      } catch (error) {
        fill(
          result,
          h('p', { class: 'error' }, `The message is not valid JSON: ${(error as Error).message}`),
        );
        return;
      }
    }
    try {
      const answer = await api<SelectorAnswer>('POST', '/selector', body);
      notify('');
      if (!answer.valid) {
        fill(
          result,
          h('p', { class: 'error' }, `Invalid selector: ${answer.error}`),
          h(
            'pre',
            { class: 'caret', 'aria-label': `error at column ${answer.column}` },
            caret(selector.value, answer.column),
          ),
        );
        return;
      }
      if (!answer.explanation) {
        fill(
          result,
          h(
            'p',
            { class: 'ok' },
            answer.empty ? 'Valid: an empty selector selects every message.' : 'Valid.',
          ),
        );
        return;
      }
      fill(
        result,
        h(
          'p',
          { class: answer.selected ? 'ok' : 'warning' },
          `${answer.explanation.value}: the message is ${answer.selected ? 'selected' : 'not selected'}.`,
        ),
        h('ul', { class: 'tree' }, tree(answer.explanation)),
      );
    } catch (error) {
      fill(result, h('p', { class: 'error' }, (error as Error).message));
    }
  };

  main.replaceChildren(
    h('h2', {}, 'Selector tester'),
    h(
      'form',
      {
        onsubmit: (event: Event) => {
          event.preventDefault();
          void run(false);
        },
      },
      h(
        'p',
        {},
        h(
          'label',
          { for: 'selector-text' },
          'Selector (SQL-92 syntax, with JMS_BEA_SELECT and XPATH for XML bodies)',
        ),
      ),
      selector,
      h(
        'p',
        { class: 'actions' },
        h('button', { type: 'submit' }, 'Check'),
        h('button', { type: 'button', onclick: () => void run(true) }, 'Evaluate against the message'),
      ),
      h(
        'p',
        {},
        h(
          'label',
          { for: 'selector-message' },
          `Message in the JSON form (now: ${from}; paste another, or browse a destination and choose "Try a selector on it")`,
        ),
      ),
      message,
    ),
    result,
  );
  selector.focus();
}
