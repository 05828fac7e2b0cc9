/**
 * Reload: first what a reload would change (re-reading the configuration file without applying
 * it), then, after a confirmation, apply it and show what it did, or the problems that kept it
 * from being applied (the running configuration is kept).
 */
import { api } from './api.js';
import { confirmAction, fill, h, notify } from './dom.js';
import type { ReloadResult } from './types.js';

function list(title: string, items: string[]): HTMLElement | null {
  return items.length === 0
    ? null
    : h('section', {}, h('h4', {}, title), h('ul', {}, ...items.map((item) => h('li', {}, item))));
}

/** A reload's outcome, or with `preview` what it would do. */
export function renderReload(result: ReloadResult, preview: boolean): HTMLElement[] {
  const changes = Object.entries(result.changes).map(([bridge, fields]) => `${bridge}: ${fields.join(', ')}`);
  const nothing =
    result.added.length + result.removed.length + result.restarted.length + result.created.length === 0;
  const headline =
    result.errors.length > 0
      ? 'The configuration file has problems: a reload would change nothing, the running configuration is kept.'
      : preview
        ? nothing
          ? 'A reload would change nothing that runs.'
          : 'A reload would do this:'
        : result.reloaded
          ? 'The configuration was reloaded.'
          : 'The configuration was not applied: the running one is kept.';
  const would = preview ? 'to add' : 'added';
  return [
    h('p', { class: result.errors.length > 0 ? 'error' : 'ok' }, headline),
    list('Problems', result.errors),
    list(`Bridges ${would}`, result.added),
    list(preview ? 'Bridges to remove (drained, then stopped)' : 'Bridges removed', result.removed),
    list(preview ? 'Bridges to restart (drained, one at a time)' : 'Bridges restarted', result.restarted),
    list('What changed', changes),
    list(preview ? 'Destinations to create' : 'Destinations created', result.created),
    list('Not applied by a running gateway', result.warnings),
    list('Unchanged bridges', result.unchanged),
  ].filter((part): part is HTMLElement => part !== null);
}

export function showReload(main: HTMLElement): void {
  const result = h('div', { id: 'reload-result', 'aria-live': 'polite' });
  const applyButton = h('button', { type: 'button', id: 'reload-apply', disabled: true }, 'Apply…');
  const preview = async () => {
    applyButton.disabled = true;
    try {
      const plan = await api<ReloadResult>('GET', '/reload', undefined, [422]);
      fill(result, ...renderReload(plan, true));
      applyButton.disabled = plan.errors.length > 0;
      notify('');
    } catch (error) {
      fill(result, h('p', { class: 'error' }, (error as Error).message));
    }
  };
  applyButton.addEventListener('click', () => {
    void (async () => {
      const question =
        'Re-read the configuration file and apply it now? Bridges whose settings changed are drained and restarted one at a time; removed ones are drained and stopped.';
      if (!(await confirmAction(question, 'Reload'))) return;
      applyButton.disabled = true;
      try {
        fill(result, h('p', {}, 'Reloading…'));
        fill(result, ...renderReload(await api<ReloadResult>('POST', '/reload', {}, [422]), false));
      } catch (error) {
        fill(result, h('p', { class: 'error' }, (error as Error).message));
      }
    })();
  });
  main.replaceChildren(
    h('h2', {}, 'Reload the configuration'),
    h(
      'p',
      {},
      'Edit the gateway\u2019s configuration file first; then see what a reload would change, and apply it.',
    ),
    h(
      'p',
      { class: 'actions' },
      h('button', { type: 'button', onclick: () => void preview() }, 'Show what would change'),
      applyButton,
    ),
    result,
  );
}
