/**
 * Reload: re-read the configuration file and apply it, after a confirmation; then what changed
 * (bridges added, removed, restarted with their changed fields, destinations created), or the
 * problems that kept it from being applied (the old configuration keeps running).
 */
import { api } from './api.js';
import { confirmAction, fill, h, notify } from './dom.js';
import type { ReloadResult } from './types.js';

function list(title: string, items: string[]): HTMLElement | null {
  return items.length === 0
    ? null
    : h('section', {}, h('h4', {}, title), h('ul', {}, ...items.map((item) => h('li', {}, item))));
}

export function renderReload(result: ReloadResult): HTMLElement[] {
  const changes = Object.entries(result.changes).map(([bridge, fields]) => `${bridge}: ${fields.join(', ')}`);
  return [
    h(
      'p',
      { class: result.reloaded ? 'ok' : 'error' },
      result.reloaded
        ? 'The configuration was reloaded.'
        : 'The configuration was not applied: the running one is kept.',
    ),
    list('Problems', result.errors),
    list('Bridges added', result.added),
    list('Bridges removed', result.removed),
    list('Bridges restarted', result.restarted),
    list('What changed', changes),
    list('Destinations created', result.created),
    list('Not applied by a running gateway', result.warnings),
    list('Unchanged bridges', result.unchanged),
  ].filter((part): part is HTMLElement => part !== null);
}

export function showReload(main: HTMLElement): void {
  const result = h('div', { id: 'reload-result', 'aria-live': 'polite' });
  const apply = async () => {
    const question =
      'Re-read the configuration file and apply it now? Bridges whose settings changed are drained and restarted one at a time; removed ones are drained and stopped. A file with problems changes nothing.';
    if (!(await confirmAction(question, 'Reload'))) return;
    try {
      fill(result, h('p', {}, 'Reloading…'));
      fill(result, ...renderReload(await api<ReloadResult>('POST', '/reload', {}, [422])));
      notify('');
    } catch (error) {
      fill(result, h('p', { class: 'error' }, (error as Error).message));
    }
  };
  main.replaceChildren(
    h('h2', {}, 'Reload the configuration'),
    h(
      'p',
      {},
      'Edit the gateway\u2019s configuration file first. Check it with ',
      h('code', {}, 'jms-gateway validate <file>'),
      ' if you like: a reload applies only a file that passes the same checks.',
    ),
    h('p', {}, h('button', { type: 'button', onclick: () => void apply() }, 'Reload…')),
    result,
  );
}
