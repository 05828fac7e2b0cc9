/**
 * Recovery (PER-1, PER-2): what a previous run left in the store comes back when an engine
 * opens: destinations made at run time, distributed destinations, durable subscriptions, and
 * their messages with delivery counts and delivery times.
 */
import type { Backlog } from '../destination/backlog.js';
import { Queue, Topic } from '../destination/destination.js';
import { Entry, StoredMessage } from '../destination/entry.js';
import type { DistributedDestinations } from '../destination/distributed-destinations.js';
import type { LoadBalancing } from '../destination/load-balancing.js';
import type { DestinationRegistry } from '../destination/registry.js';
import type { Subscriptions } from '../destination/subscriptions.js';
import type { Redelivery } from '../delivery/redelivery.js';
import type { EngineLogger } from '../logger.js';
import { parseSelector } from '../selector/index.js';
import type { RecoveredState } from '../store-port.js';
import type { EngineIds } from './ids.js';
import type { Paging } from './paging.js';
import type { StoreLink } from './store-link.js';

/** What recovery needs of the engine. */
export interface RecoveryContext {
  readonly storeLink: StoreLink;
  readonly ids: EngineIds;
  readonly registry: DestinationRegistry;
  readonly distributed: DistributedDestinations;
  readonly subscriptions: Subscriptions;
  readonly redelivery: Redelivery;
  readonly paging: Paging;
  readonly logger: EngineLogger;
  now(): number;
}

/** Restores the engine's state from its store. */
export async function recover(context: RecoveryContext): Promise<void> {
  const recovered = await context.storeLink.store.recover();
  context.ids.continueAfter(recovered.maxSeq);
  await restoreDestinations(context, recovered);
  restoreSubscriptions(context, recovered);
  const restored = restoreMessages(context, recovered);
  context.logger.info({ destinations: context.registry.size, messages: restored }, 'store recovered');
}

/** Queues and topics first, then the distributed destinations over them. */
async function restoreDestinations(context: RecoveryContext, recovered: RecoveredState): Promise<void> {
  const { registry } = context;
  const isDistributed = (record: RecoveredState['destinations'][number]) =>
    Array.isArray(record.options.distributedMembers);
  for (const record of recovered.destinations) {
    if (isDistributed(record)) continue;
    const handle = record.kind === 'queue' ? new Queue(record.name) : new Topic(record.name);
    if (!registry.find(handle)) registry.register(handle, record.options);
  }
  // Definitions stored by an earlier run come back as they were, checked or not: refusing one
  // now would keep the gateway from starting.
  for (const record of recovered.destinations.filter(isDistributed)) {
    const members = record.options.distributedMembers as { name: string; weight: number }[];
    await context.distributed.create(
      {
        kind: record.kind,
        name: record.name,
        members,
        loadBalancing: record.options.loadBalancing as LoadBalancing,
      },
      false,
    );
  }
}

function restoreSubscriptions(context: RecoveryContext, recovered: RecoveredState): void {
  const { registry } = context;
  for (const record of recovered.subscriptions) {
    const handle = new Topic(record.topic);
    const topic = registry.find(handle) ?? registry.register(handle, {});
    if (topic.kind !== 'topic') continue;
    const selector = parseSelector(record.selector);
    context.subscriptions.subscribe(topic, {
      name: record.name,
      clientId: record.clientId,
      selector: selector.text === null ? null : selector,
      noLocal: record.noLocal,
      durable: true,
      shared: record.shared,
      connectionId: null,
    });
  }
}

/** Puts every stored reference back in its backlog; returns how many. */
function restoreMessages(context: RecoveryContext, recovered: RecoveredState): number {
  const now = context.now();
  const backlogs = new Map<string, Backlog>();
  for (const state of context.registry.states()) {
    if (state.kind === 'queue') backlogs.set(state.backlog.key, state.backlog);
  }
  for (const subscription of context.subscriptions.named())
    backlogs.set(subscription.backlog.key, subscription.backlog);
  // References come in seq order, so those to one message come together: one StoredMessage is
  // shared by them, and no map of every recovered message is needed (it would grow with the backlog).
  let stored: StoredMessage | undefined;
  let lastSeq = -Infinity;
  let restored = 0;
  /** Entries the crash left delivered: they may have used up their redeliveries (DLV-2). */
  const leftDelivered: { backlog: Backlog; entry: Entry }[] = [];
  for (const ref of recovered.refs) {
    if (ref.seq < lastSeq)
      throw new Error(
        `the store returned message references out of order (seq ${ref.seq} after ${lastSeq}): recovery needs them in seq order`,
      );
    lastSeq = ref.seq;
    const backlog = backlogs.get(ref.backlog);
    if (!backlog) continue;
    if (stored?.id !== ref.id || stored.seq !== ref.seq) {
      stored = new StoredMessage(
        ref.message,
        ref.seq,
        ref.message.getSize() + (ref.unreadBodyBytes ?? 0),
        true,
        'recovered',
        ref.sender?.clientId ?? null,
      );
      // The producer's redelivery limit still applies after a restart (DLV-2).
      if (ref.sender) stored.redeliveryLimit = ref.sender.redeliveryLimit;
    }
    stored.references++;
    stored.holders++;
    stored.scheduled = ref.message.getJMSDeliveryTime() > now;
    const entry = new Entry(stored);
    entry.deliveryCount = ref.deliveryCount;
    // A redelivery delay still to run is waited out; a message left unacknowledged by the crash gets none (DLV-1).
    if (ref.notBefore > now) backlog.addDelayed(entry, ref.notBefore);
    else {
      backlog.add(entry);
      if (entry.deliveryCount > 0) leftDelivered.push({ backlog, entry });
    }
    // Added first: the backlog reads what it orders by (a unit of order) from the message in hand.
    if (ref.unreadBodyBytes !== undefined) context.paging.keepPagedOut(stored);
    else context.paging.pageOutIfOverThreshold(stored);
    restored++;
  }
  // Recovery rewrote nothing: what was stored is as it was.
  context.storeLink.discardPending();
  // Delivering one of these again would be a redelivery past its limit: it is undeliverable
  // now, as it would have been had it been rolled back instead of left by the crash.
  for (const { backlog, entry } of leftDelivered)
    context.redelivery.moveToErrorDestinationIfLimitReached(backlog, entry);
  return restored;
}
