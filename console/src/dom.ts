/** A few DOM helpers: elements built in code, so no text ever becomes markup. */

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | EventListener | undefined>;

/** `h('button', { onclick: f, class: 'x' }, 'Text')`: attributes, `on*` listeners, children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Replaces the children of `parent`. */
export function fill(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren();
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
}

/** A table with a header row; `rows` are cells. */
export function table(
  caption: string,
  headings: string[],
  rows: Child[][],
  className = '',
): HTMLTableElement {
  return h(
    'table',
    { class: className },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...headings.map((heading) => h('th', { scope: 'col' }, heading)))),
    h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell) => h('td', {}, cell))))),
  );
}

/** Shows a message for the whole page (an error, or what an action did). */
export function notify(text: string, kind: 'error' | 'info' | 'unreachable' = 'error'): void {
  const notice = document.getElementById('notice')!;
  fill(notice, text ? h('p', { class: kind === 'unreachable' ? 'error unreachable' : kind }, text) : null);
}

/** Clears the notice that the gateway did not answer, once it answers again. */
export function reachable(): void {
  document.querySelector('#notice .unreachable')?.remove();
}

/** Asks for a confirmation in a modal dialog (Esc or Cancel: no); resolves true on OK. */
export function confirmAction(text: string, ok = 'OK'): Promise<boolean> {
  const dialog = document.getElementById('confirm') as HTMLDialogElement;
  document.getElementById('confirm-text')!.textContent = text;
  document.getElementById('confirm-ok')!.textContent = ok;
  dialog.returnValue = '';
  dialog.showModal();
  (document.getElementById('confirm-ok') as HTMLButtonElement).focus();
  return new Promise((resolve) =>
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }),
  );
}

/** `1 message`, `3 messages`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
