import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { adminJson, eventually, runCli, withGateway } from './gateway-harness.js';

/**
 * queue://orders allows no redelivery. The bridge `deliver` takes orders to queue://full, which
 * holds one message and is full, so every order the bridge reads waits in flight; restarting the
 * bridge gives them back, and the engine parks them in queue://orders.errors, as it does for any
 * consumer that gives a message back more often than its destination allows.
 */
const CONFIG = [
  'store: { path: ./data }',
  'destinations:',
  '  queues:',
  '    - { name: orders, redeliveryLimit: 0, errorDestination: queue://orders.errors }',
  '    - { name: orders.errors }',
  '    - { name: full, messagesMaximum: 1 }',
  'bridges:',
  '  - name: deliver',
  '    source: { type: jms, destination: queue://orders }',
  '    target: { type: jms, destination: queue://full, sendTimeoutMs: 100 }',
  '    stopTimeoutMs: 200',
  '',
].join('\n');

interface MessageView {
  type: string;
  headers: Record<string, unknown>;
  properties: Record<string, unknown>;
  body: string;
}

const ORDERS = [1, 2, 3].map((n) => ({
  type: 'text',
  headers: { JMSCorrelationID: `corr-${n}`, JMSType: 'order', JMSPriority: 7 },
  properties: {
    region: n === 2 ? 'us' : 'eu',
    amount: { type: 'long', value: String(1000 * n) },
    rush: n === 3,
    ratio: n / 4,
    lines: { type: 'short', value: n },
  },
  body: `<order id="${n}"/>`,
}));

async function browse(admin: string, queue: string): Promise<MessageView[]> {
  return adminJson<MessageView[]>(admin, `/destinations/queue/${queue}/messages?limit=1000`);
}

async function bridgeIn(admin: string): Promise<number> {
  const bridges = await adminJson<{ name: string; counters: { in: number } }[]>(admin, '/bridges');
  return bridges.find((b) => b.name === 'deliver')!.counters.in;
}

/** Waits until the bridge has read `count` deliveries in all. */
async function bridgeHasRead(admin: string, count: number): Promise<void> {
  await eventually(
    async () => ((await bridgeIn(admin)) >= count ? true : undefined),
    `the bridge to have read ${count} deliveries`,
  );
}

async function current(admin: string, queue: string): Promise<number> {
  const stats = await adminJson<{ messagesCurrent: number }>(admin, `/destinations/queue/${queue}`);
  return stats.messagesCurrent;
}

test(
  'gateway replay - jms-gateway replay moves parked messages back to their origin with headers and properties, delivery count reset',
  { timeout: 90_000 },
  async () => {
    await withGateway({ files: { 'gateway.yaml': CONFIG } }, async (running, space) => {
      const admin = running.admin;
      const post = (path: string, body: unknown = {}) =>
        adminJson(admin, path, { method: 'POST', body: JSON.stringify(body) });

      await post('/destinations/queue/full/messages', { type: 'text', body: 'blocker' });
      for (const order of ORDERS) await post('/destinations/queue/orders/messages', order);
      await bridgeHasRead(admin, 3);
      // Given back: past the limit of no redelivery, so parked.
      await post('/bridges/deliver/restart');
      const parked = await eventually(async () => {
        const messages = await browse(admin, 'orders.errors');
        return messages.length === ORDERS.length ? messages : undefined;
      }, 'the orders parked in queue://orders.errors');
      // Take the route out while replaying (a paused bridge still holds a message its consumer
      // had prefetched), so the replayed orders stay where the test can see them.
      const withoutRoute = CONFIG.slice(0, CONFIG.indexOf('bridges:'));
      await writeFile(space.path('gateway.yaml'), withoutRoute);
      const reload = await post('/reload');
      assert.deepEqual((reload as { removed: string[] }).removed, ['deliver']);
      for (const message of parked) {
        assert.equal(message.properties.JMS_ErrorOrigin, 'queue://orders');
        assert.match(
          message.properties.JMS_ErrorReason as string,
          /^redelivery limit 0 reached after \d+ deliveries$/,
        );
        assert.ok((message.properties.JMS_ErrorDeliveryCount as number) >= 1);
      }
      assert.deepEqual(await browse(admin, 'orders'), []);

      const replay = await runCli(['replay', 'orders.errors'], space.dir, { JMS_GATEWAY_ADMIN_URL: admin });
      assert.equal(replay.code, 0, replay.stderr);
      assert.match(replay.stdout, /moved 3 messages from orders\.errors to their origins/);
      assert.match(replay.stderr, /^moved 3\/3 \(100%\)/m, 'progress against the total');

      assert.deepEqual(await browse(admin, 'orders.errors'), []);
      const replayed = await browse(admin, 'orders');
      assert.equal(replayed.length, ORDERS.length);
      const byBody = new Map(replayed.map((m) => [m.body, m]));
      for (const order of ORDERS) {
        const message = byBody.get(order.body);
        assert.ok(message, `${order.body} replayed`);
        assert.equal(message.type, 'text');
        assert.equal(message.headers.JMSCorrelationID, order.headers.JMSCorrelationID);
        assert.equal(message.headers.JMSType, 'order');
        assert.equal(message.headers.JMSPriority, 7);
        assert.equal(message.headers.JMSDeliveryMode, 'PERSISTENT');
        assert.equal(message.headers.JMSRedelivered, false);
        // No JMSXDeliveryCount: the count starts again from 0 (it shows once delivered).
        assert.deepEqual(
          message.properties,
          order.properties,
          'properties kept with their types, parking ones and the delivery count gone',
        );
      }

      // Back on the route: the bridge reads each replayed order again, and nothing is parked.
      await writeFile(space.path('gateway.yaml'), CONFIG);
      assert.deepEqual(((await post('/reload')) as { added: string[] }).added, ['deliver']);
      await bridgeHasRead(admin, 3);
      assert.equal(await current(admin, 'orders.errors'), 0);
      assert.equal(await current(admin, 'full'), 1, 'still full: the orders wait in flight');

      // Given back again, they are parked again after as many deliveries as the first time: the
      // count started from 0 with the replay, it did not go on from where it was.
      const counts = (messages: MessageView[]) =>
        Object.fromEntries(messages.map((m) => [m.body, m.properties.JMS_ErrorDeliveryCount]));
      await post('/bridges/deliver/restart');
      const again = await eventually(async () => {
        const messages = await browse(admin, 'orders.errors');
        return messages.length === ORDERS.length ? messages : undefined;
      }, 'the orders parked again');
      assert.deepEqual(counts(again), counts(parked));

      const stopped = await running.stop('SIGTERM');
      assert.equal(stopped.code, 0, stopped.stderr);
    });
  },
);
