/**
 * One queue: browse its available messages through a selector, page by page; look at one
 * message's headers, typed properties and body; delete a message; move messages, or replay an
 * error destination's messages to their origins, after a confirmation that names how many.
 */
import { ApiError, api, segment } from './api.js';
import { describeSize, formatBody } from './body-format.js';
import { confirmAction, fill, h, notify, plural, table } from './dom.js';
import { offerToSelectorTester } from './selector.js';
import type { DestinationStatistics, MessageJson, ValueJson } from './types.js';

/** Messages a page shows. */
const PAGE_SIZE = 25;

const idOf = (message: MessageJson) => String(message.headers.JMSMessageID ?? '');

function typedValue(value: ValueJson): [string, string] {
  if (typeof value === 'object') return [value.type, String(value.value)];
  if (typeof value === 'string') return ['string', value];
  if (typeof value === 'boolean') return ['boolean', String(value)];
  return [Number.isInteger(value) ? 'int' : 'double', String(value)];
}

function messageDetail(message: MessageJson, onDelete: () => void): HTMLElement {
  const headers = Object.entries(message.headers).map(([name, value]) => [
    name,
    value === null ? 'null' : String(value),
  ]);
  const properties = Object.entries(message.properties).map(([name, value]) => {
    const [type, text] = typedValue(value);
    return [name, type, text];
  });
  const body = formatBody(message);
  const unit = body.format === 'hex' ? 'bytes' : 'characters';
  let download: HTMLElement | null = null;
  if (body.whole !== undefined) {
    const url = URL.createObjectURL(new Blob([body.whole], { type: 'application/octet-stream' }));
    download = h(
      'p',
      { class: 'warning', role: 'status' },
      `The body is ${describeSize(body.size, unit)}: only its beginning is shown. `,
      h(
        'a',
        { href: url, download: `${idOf(message).replace(/[^\w.-]/g, '_')}.body` },
        'Download the whole body',
      ),
    );
  }
  return h(
    'section',
    { class: 'message', 'aria-label': `message ${idOf(message)}`, tabindex: '-1' },
    h('h3', {}, `Message ${idOf(message)}`),
    h(
      'p',
      { class: 'actions' },
      h('button', { type: 'button', onclick: onDelete }, 'Delete this message'),
      h('button', { type: 'button', onclick: () => offerToSelectorTester(message) }, 'Try a selector on it'),
    ),
    table('Headers', ['Header', 'Value'], headers),
    properties.length === 0
      ? h('p', {}, 'No properties.')
      : table('Properties', ['Property', 'Type', 'Value'], properties),
    h('h4', {}, `Body (${message.type}, shown as ${body.format}, ${describeSize(body.size, unit)})`),
    download,
    h('pre', { class: 'body', tabindex: '0' }, body.text),
  );
}

/** Renders the queue `kind://name` into `main`. */
export function showDestination(main: HTMLElement, kind: string, name: string): void {
  const uri = `${kind}://${name}`;
  const path = `/destinations/${segment(kind)}/${segment(name)}`;
  let page = 0;
  let messages: MessageJson[] = [];
  let more = false;
  const summary = h('p', { class: 'summary' });
  const list = h('div', { class: 'list' });
  const detail = h('div');
  const selectorInput = h('input', {
    id: 'browse-selector',
    name: 'selector',
    size: 60,
    placeholder: "e.g. JMSPriority > 4 AND region = 'eu'",
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const target = h('input', { id: 'move-target', name: 'target', size: 30, placeholder: 'queue://orders' });
  const selector = () => selectorInput.value.trim() || null;

  const loadStats = async () => {
    const stats = await api<DestinationStatistics>('GET', path);
    fill(
      summary,
      `${plural(stats.messagesCurrent, 'message')} available, ${stats.messagesPending} pending, ${plural(stats.consumersCurrent, 'consumer')}.`,
    );
  };

  /** Browses the current page; `keepNotice` keeps what an action just said (done, or why it failed). */
  const browse = async (keepNotice = false) => {
    detail.replaceChildren();
    const query = new URLSearchParams({ limit: String((page + 1) * PAGE_SIZE + 1) });
    if (selector()) query.set('selector', selector()!);
    try {
      const all = await api<MessageJson[]>('GET', `${path}/messages?${query.toString()}`);
      more = all.length > (page + 1) * PAGE_SIZE;
      messages = all.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
      await loadStats();
      if (!keepNotice) notify('');
    } catch (error) {
      messages = [];
      more = false;
      notify(browseError(error));
    }
    renderList();
  };

  const remove = async (message: MessageJson) => {
    const id = idOf(message);
    if (!(await confirmAction(`Delete 1 message (${id}) from ${uri}? It cannot be brought back.`, 'Delete')))
      return;
    try {
      await api('DELETE', `${path}/messages/${segment(id)}`);
      notify(`Deleted message ${id}.`, 'info');
    } catch (error) {
      notify(`Could not delete message ${id}: ${(error as Error).message}`);
    }
    await browse(true);
  };

  const renderList = () => {
    const rows = messages.map((message) => {
      const id = idOf(message);
      return [
        h(
          'button',
          {
            type: 'button',
            class: 'link',
            onclick: () => {
              detail.replaceChildren(messageDetail(message, () => void remove(message)));
              (detail.firstElementChild as HTMLElement).focus();
            },
          },
          id,
        ),
        new Date(Number(message.headers.JMSTimestamp ?? 0)).toISOString().replace('T', ' ').slice(0, 19),
        message.type,
        String(message.headers.JMSPriority ?? ''),
        String(message.headers.JMSType ?? ''),
        String((message.properties.JMS_ErrorReason as string | undefined) ?? ''),
      ];
    });
    fill(
      list,
      messages.length === 0
        ? h('p', {}, page === 0 ? 'No available messages match.' : 'No more messages.')
        : table(
            `Messages ${page * PAGE_SIZE + 1}–${page * PAGE_SIZE + messages.length}${more ? ' (more follow)' : ''}`,
            ['JMSMessageID', 'Timestamp (UTC)', 'Type', 'Priority', 'JMSType', 'Error reason'],
            rows,
            'messages',
          ),
      h(
        'p',
        { class: 'actions' },
        h(
          'button',
          { type: 'button', disabled: page === 0, onclick: () => void ((page -= 1), browse()) },
          '← Previous page',
        ),
        h(
          'button',
          { type: 'button', disabled: !more, onclick: () => void ((page += 1), browse()) },
          'Next page →',
        ),
      ),
    );
  };

  /** Moves (to a destination) or replays (`origin`) what the selector picks, after saying how many. */
  const move = async (to: string) => {
    const replay = to === 'origin';
    const picked = replay
      ? [selector(), 'JMS_ErrorOrigin IS NOT NULL']
          .filter(Boolean)
          .map((s) => `(${s})`)
          .join(' AND ')
      : selector();
    try {
      const query = picked ? `?${new URLSearchParams({ selector: picked }).toString()}` : '';
      const { count } = await api<{ count: number }>('GET', `${path}/count${query}`);
      if (count === 0) {
        notify(
          replay ? 'No message here has an origin to replay to.' : 'No message matches: nothing to move.',
          'info',
        );
        return;
      }
      const what = `${plural(count, 'message')}${selector() ? ` matching ${selector()}` : ''}`;
      const question = replay
        ? `Replay ${what} from ${uri} to their origins?`
        : `Move ${what} from ${uri} to ${to}?`;
      if (!(await confirmAction(question, replay ? `Replay ${count}` : `Move ${count}`))) return;
      const body: Record<string, unknown> = { to };
      if (selector()) body.selector = selector();
      const { moved } = await api<{ moved: number }>('POST', `${path}/move`, body);
      notify(
        `${replay ? 'Replayed' : 'Moved'} ${plural(moved, 'message')}${replay ? ' to their origins' : ` to ${to}`}.`,
        'info',
      );
    } catch (error) {
      notify(
        `${replay ? 'Replay' : 'Move'} failed, nothing was moved from the failing batch: ${(error as Error).message}`,
      );
    }
    page = 0;
    await browse(true);
  };

  const browseForm = h(
    'form',
    {
      class: 'browse',
      onsubmit: (event: Event) => {
        event.preventDefault();
        page = 0;
        void browse();
      },
    },
    h('label', { for: 'browse-selector' }, 'Selector '),
    selectorInput,
    h('button', { type: 'submit' }, 'Browse'),
  );
  const moveForm = h(
    'form',
    {
      class: 'move',
      onsubmit: (event: Event) => {
        event.preventDefault();
        if (target.value.trim()) void move(target.value.trim());
        else notify('Give the destination to move to, like queue://orders.');
      },
    },
    h('button', { type: 'button', onclick: () => void move('origin') }, 'Replay to origin…'),
    h('label', { for: 'move-target' }, ' or move to '),
    target,
    h('button', { type: 'submit' }, 'Move…'),
    h('span', { class: 'hint' }, ' (both take the selector above; none: every message)'),
  );
  main.replaceChildren(
    h('h2', {}, uri),
    h('p', {}, h('a', { href: '#/overview' }, '← Overview')),
    summary,
    browseForm,
    moveForm,
    list,
    detail,
  );
  void browse();
}

function browseError(error: unknown): string {
  if (error instanceof ApiError && error.status === 400) return `The selector is not valid: ${error.message}`;
  if (error instanceof ApiError && error.status === 404)
    return `${error.message} (it may have been deleted).`;
  return (error as Error).message;
}
