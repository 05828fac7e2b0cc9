/**
 * The overview: every destination with its messages, pending by cause, consumers and rates;
 * every bridge with its status (and why, when it failed), counters, lag and a chart of its rate.
 * A non-empty error destination stands out: those are messages waiting for an operator.
 */
import { ApiError, api, segment } from './api.js';
import { confirmAction, h, notify, reachable, table } from './dom.js';
import { RateHistory, rateChart } from './rate-history.js';
import type { BridgeView, DestinationStatistics, EngineStatistics, PendingByCause } from './types.js';

/** How often the overview polls the gateway. */
export const POLL_MS = 2_000;

const history = new RateHistory();
/** The previous poll's counters per destination, for rates. */
let previous: { at: number; received: Map<string, number>; acknowledged: Map<string, number> } | undefined;
let rates = new Map<string, { inRate: number; outRate: number }>();

/**
 * Whether a destination holds parked messages: the names error destinations are given
 * (`orders.errors`, `orders.dlq`, `DLQ.orders`, `orders-dead-letter`).
 */
export function isErrorDestination(name: string): boolean {
  const bare = name.replace(/^\w+:\/\//, '');
  return /(^|[.\-_])(errors?|dlq|dead[.\-_]?letters?|parked)$/i.test(bare) || /^dlq[.\-_]/i.test(bare);
}

const CAUSES: [keyof PendingByCause, string][] = [
  ['uncommitted', 'uncommitted'],
  ['scheduled', 'scheduled'],
  ['redeliveryDelay', 'redelivery delay'],
  ['unacknowledged', 'unacknowledged'],
  ['errorDestinationFull', 'error destination full'],
];

function pendingCell(causes: PendingByCause, total: number): Node | string {
  if (total === 0) return '0';
  const parts = CAUSES.filter(([key]) => causes[key] > 0).map(([key, label]) => `${causes[key]} ${label}`);
  return h('span', { title: parts.join(', ') }, `${total} (${parts.join(', ')})`);
}

const rate = (value: number | undefined) => (value === undefined ? '–' : `${value.toFixed(1)}/s`);

function destinationRow(stats: DestinationStatistics): (Node | string)[] {
  const [kind, name] = stats.destination.split('://') as [string, string];
  const parked = isErrorDestination(stats.destination) && stats.messagesCurrent > 0;
  const link =
    stats.kind === 'queue'
      ? h('a', { href: `#/destination/${kind}/${segment(name)}` }, stats.destination)
      : h('span', {}, stats.destination);
  const r = rates.get(stats.destination);
  return [
    h('span', {}, link, parked ? h('strong', { class: 'badge' }, ' parked messages') : null),
    h('span', { class: parked ? 'alarm' : '' }, String(stats.messagesCurrent)),
    pendingCell(stats.pendingMessagesByCause, stats.messagesPending),
    String(
      stats.consumersCurrent + (stats.subscriptions === undefined ? '' : ` (${stats.subscriptions} subs)`),
    ),
    rate(r?.inRate),
    rate(r?.outRate),
  ];
}

function bridgeRow(bridge: BridgeView, refresh: () => Promise<void>, now: number): (Node | string)[] {
  const failed = bridge.status === 'failed';
  const report = bridge.statusReport;
  const why = report?.reason
    ? `${report.reason}${report.detail ? ` (${report.detail})` : ''}`
    : failed || bridge.status === 'reconnecting'
      ? bridge.lastError
      : undefined;
  const act = (action: 'pause' | 'resume' | 'restart') =>
    h(
      'button',
      {
        type: 'button',
        'aria-label': `${action} ${bridge.name}`,
        onclick: () => {
          void (async () => {
            if (
              action === 'restart' &&
              !(await confirmAction(
                `Restart bridge '${bridge.name}'? In-flight messages are given back first.`,
                'Restart',
              ))
            )
              return;
            try {
              const view = await api<BridgeView>('POST', `/bridges/${segment(bridge.name)}/${action}`);
              notify(`Bridge '${bridge.name}' is ${view.status} now.`, 'info');
            } catch (error) {
              notify(`Could not ${action} bridge '${bridge.name}': ${(error as Error).message}`);
            }
            await refresh();
          })();
        },
      },
      action,
    );
  const c = bridge.counters;
  return [
    h('span', { title: [bridge.source, bridge.target].filter(Boolean).join(' → ') }, bridge.name),
    h(
      'span',
      { class: `status status-${bridge.status}`, 'data-bridge-status': bridge.status },
      bridge.status,
      why ? h('span', { class: 'reason' }, `: ${why}`) : null,
    ),
    String(c.in ?? 0),
    String(c.out ?? 0),
    String(c.retried ?? 0),
    h('span', { class: (c.deadLettered ?? 0) > 0 ? 'alarm' : '' }, String(c.deadLettered ?? 0)),
    String(c.lag ?? 0),
    rateChart(history.rates(bridge.name), now),
    h(
      'span',
      { class: 'actions' },
      bridge.status === 'paused' ? act('resume') : act('pause'),
      act('restart'),
    ),
  ];
}

/** Polls the gateway, records rates and returns what the overview shows. */
async function poll(): Promise<{ destinations: DestinationStatistics[]; bridges: BridgeView[]; at: number }> {
  const [statistics, bridges] = await Promise.all([
    api<EngineStatistics>('GET', '/destinations'),
    api<BridgeView[]>('GET', '/bridges'),
  ]);
  const at = Date.now();
  for (const bridge of bridges) history.record(bridge.name, bridge.counters.out ?? 0, at);
  const received = new Map(statistics.destinations.map((d) => [d.destination, d.messagesReceived]));
  const acknowledged = new Map(statistics.destinations.map((d) => [d.destination, d.messagesAcknowledged]));
  if (previous) {
    const seconds = (at - previous.at) / 1000;
    rates = new Map(
      statistics.destinations.map((d) => [
        d.destination,
        {
          inRate:
            Math.max(0, d.messagesReceived - (previous!.received.get(d.destination) ?? d.messagesReceived)) /
            seconds,
          outRate:
            Math.max(
              0,
              d.messagesAcknowledged - (previous!.acknowledged.get(d.destination) ?? d.messagesAcknowledged),
            ) / seconds,
        },
      ]),
    );
  }
  previous = { at, received, acknowledged };
  return { destinations: statistics.destinations, bridges, at };
}

/** Renders the overview into `main` and keeps it current until `signal` aborts. */
export function showOverview(main: HTMLElement, signal: AbortSignal): void {
  const destinations = h('section', { 'aria-labelledby': 'destinations-heading' });
  const bridges = h('section', { 'aria-labelledby': 'bridges-heading' });
  main.replaceChildren(h('h2', {}, 'Overview'), bridges, destinations);
  const refresh = async () => {
    try {
      const state = await poll();
      if (signal.aborted) return;
      reachable();
      const sorted = [...state.destinations].sort(
        (a, b) =>
          Number(isErrorDestination(b.destination) && b.messagesCurrent > 0) -
            Number(isErrorDestination(a.destination) && a.messagesCurrent > 0) ||
          a.destination.localeCompare(b.destination),
      );
      destinations.replaceChildren(
        h('h3', { id: 'destinations-heading' }, 'Destinations'),
        table(
          `${state.destinations.length} destinations; error destinations with messages first`,
          ['Destination', 'Current', 'Pending (by cause)', 'Consumers', 'In', 'Out'],
          sorted.map(destinationRow),
          'destinations',
        ),
      );
      bridges.replaceChildren(
        h('h3', { id: 'bridges-heading' }, 'Bridges'),
        state.bridges.length === 0
          ? h('p', {}, 'No bridges are configured.')
          : table(
              `${state.bridges.length} bridges; the chart shows messages out per second over the last 15 minutes`,
              [
                'Bridge',
                'Status',
                'In',
                'Out',
                'Retried',
                'Dead-lettered',
                'Lag',
                'Out rate, 15 min',
                'Actions',
              ],
              state.bridges.map((bridge) => bridgeRow(bridge, refresh, state.at)),
              'bridges',
            ),
      );
    } catch (error) {
      if (!signal.aborted)
        notify(
          (error as Error).message,
          error instanceof ApiError && error.status === 0 ? 'unreachable' : 'error',
        );
    }
  };
  void refresh();
  const timer = setInterval(() => void refresh(), POLL_MS);
  signal.addEventListener('abort', () => clearInterval(timer));
}
