/**
 * Prometheus text exposition of the gateway's state: per destination (current, pending by cause,
 * bytes, consumers, totals) and per bridge (counters and status), so a stalled or dropping
 * bridge shows in metrics, not only in logs.
 */
import type { JmsEngine } from '../jms/engine.js';
import type { DestinationStatistics, PendingByCause } from '../jms/statistics.js';
import type { BridgeView } from './bridge-control.js';

const PREFIX = 'jms_gateway';

/** Collects samples by metric family and renders each family's samples together, as the format requires. */
class Exposition {
  readonly #families = new Map<string, { header: string[]; samples: string[] }>();

  metric(
    name: string,
    type: 'gauge' | 'counter',
    help: string,
    labels: Record<string, string>,
    value: number,
  ): void {
    const full = `${PREFIX}_${name}`;
    let family = this.#families.get(full);
    if (!family)
      this.#families.set(
        full,
        (family = { header: [`# HELP ${full} ${help}`, `# TYPE ${full} ${type}`], samples: [] }),
      );
    const rendered = Object.entries(labels)
      .map(
        ([key, v]) => `${key}="${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`,
      )
      .join(',');
    family.samples.push(`${full}${rendered ? `{${rendered}}` : ''} ${Number.isFinite(value) ? value : 0}`);
  }

  toString(): string {
    return `${[...this.#families.values()].flatMap((family) => [...family.header, ...family.samples]).join('\n')}\n`;
  }
}

/**
 * One sample per destination and pending cause. The causes are whatever the statistics report,
 * so a new cause shows up here (and in the help text) without a change.
 */
function byCause(
  out: Exposition,
  stats: readonly DestinationStatistics[],
  name: string,
  what: 'messages' | 'bytes',
  causes: (s: DestinationStatistics) => PendingByCause,
): void {
  const names = [...new Set(stats.flatMap((s) => Object.keys(causes(s))))].join(', ');
  const help = `Pending ${what} by cause (${names}): why they are not available.`;
  for (const s of stats) {
    for (const [cause, value] of Object.entries(causes(s)) as [string, number][])
      out.metric(name, 'gauge', help, { destination: s.destination, kind: s.kind, cause }, value);
  }
}

/** Renders the metrics page. Metrics of one name are grouped, as the format requires. */
export function renderMetrics(engine: JmsEngine, bridges: readonly BridgeView[]): string {
  const out = new Exposition();
  const stats = engine.statistics().destinations;
  const each = (
    name: string,
    type: 'gauge' | 'counter',
    help: string,
    value: (s: (typeof stats)[number]) => number,
  ) => {
    for (const s of stats)
      out.metric(name, type, help, { destination: s.destination, kind: s.kind }, value(s));
  };
  each(
    'destination_messages_current',
    'gauge',
    'Messages available to consumers now.',
    (s) => s.messagesCurrent,
  );
  each(
    'destination_messages_pending',
    'gauge',
    'Messages held but not available (all causes).',
    (s) => s.messagesPending,
  );
  byCause(out, stats, 'destination_messages_pending_by_cause', 'messages', (s) => s.pendingMessagesByCause);
  each('destination_bytes_current', 'gauge', 'Bytes of available messages.', (s) => s.bytesCurrent);
  each('destination_bytes_pending', 'gauge', 'Bytes of pending messages.', (s) => s.bytesPending);
  byCause(out, stats, 'destination_bytes_pending_by_cause', 'bytes', (s) => s.pendingBytesByCause);
  each('destination_consumers', 'gauge', 'Consumers attached now.', (s) => s.consumersCurrent);
  each(
    'destination_messages_high_water',
    'gauge',
    'Most messages held at once since the gateway started (a topic: its subscriptions together).',
    (s) => s.messagesHighWater,
  );
  each(
    'destination_messages_received_total',
    'counter',
    'Messages sent to the destination.',
    (s) => s.messagesReceived,
  );
  each(
    'destination_messages_acknowledged_total',
    'counter',
    'Messages acknowledged by consumers.',
    (s) => s.messagesAcknowledged,
  );
  each('destination_messages_expired_total', 'counter', 'Messages expired.', (s) => s.messagesExpired);
  out.metric(
    'messages_moved_to_error_destination_total',
    'counter',
    'Messages moved to an error destination.',
    {},
    engine.messagesMovedToErrorDestinations,
  );
  out.metric(
    'undeliverable_messages_deleted_total',
    'counter',
    'Undeliverable messages deleted for want of an error destination.',
    {},
    engine.messagesDiscarded,
  );
  out.metric(
    'blocked_sends',
    'gauge',
    'Sends waiting for room in a full or throttled destination.',
    {},
    engine.blockedSends,
  );
  for (const bridge of bridges) {
    for (const [counter, value] of Object.entries(bridge.counters)) {
      const name = `bridge_${counter.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
      const gauge = counter === 'inFlight' || counter === 'lag';
      out.metric(
        gauge ? name : `${name}_total`,
        gauge ? 'gauge' : 'counter',
        `Bridge counter '${counter}'.`,
        { bridge: bridge.name },
        value,
      );
    }
  }
  for (const bridge of bridges) {
    out.metric(
      'bridge_status',
      'gauge',
      'The bridge status as a label; the value is 1.',
      { bridge: bridge.name, status: bridge.status },
      1,
    );
  }
  for (const bridge of bridges) {
    const reason = bridge.statusReport?.reason;
    if (reason === undefined) continue;
    out.metric(
      'bridge_status_reason',
      'gauge',
      'Why the bridge has its status (failed: misconfigured or unit-stalled, retrying: retry-delay or back-off, ...) as labels; the value is 1.',
      { bridge: bridge.name, status: bridge.status, reason },
      1,
    );
  }
  return out.toString();
}
