import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DeliveryMode,
  InvalidDestinationError,
  type Message,
  Queue,
  Session,
  TextMessage,
  Topic,
} from '../../../../src/index.js';
import { weightedRoundRobin } from '../../../../src/jms/destination/distributed.js';
import { testEngine } from '../../../helpers/engine.js';
import { teardown } from '../../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

test('distributed - weights 2, 5, 3 give the order A,B,C,A,B,C,B,C,B,B that WebLogic documents (DST-8)', () => {
  assert.deepEqual(
    weightedRoundRobin([2, 5, 3]).map((i) => 'ABC'[i]),
    ['A', 'B', 'C', 'A', 'B', 'C', 'B', 'C', 'B', 'B'],
  );
});

test('distributed - a producer spreads sends over members in weighted round-robin when all have consumers (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const orders = await t.engine.createDistributedDestination('queue', 'orders', [
    { name: 'orders.A', weight: 2 },
    { name: 'orders.B', weight: 5 },
    { name: 'orders.C', weight: 3 },
  ]);
  const session = t.connect().createSession();
  const consumers = ['orders.A', 'orders.B', 'orders.C'].map((name) =>
    session.createConsumer(new Queue(name)),
  );
  const producer = session.createProducer(orders);
  const members: string[] = [];
  for (let i = 0; i < 10; i++) {
    const m = new TextMessage(`m${i}`);
    await producer.send(m);
    members.push(m.getJMSDestination()!.name.slice(-1));
  }
  assert.deepEqual(members, ['A', 'B', 'C', 'A', 'B', 'C', 'B', 'C', 'B', 'B']);
  for (const consumer of consumers) await consumer.close();
});

test('distributed - members without consumers are skipped unless no member has one (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const dq = await t.engine.createDistributedDestination('queue', 'dq', [{ name: 'm1' }, { name: 'm2' }]);
  const session = t.connect().createSession();
  const producer = session.createProducer(dq);
  const sentTo = async () => {
    const m = new TextMessage('x');
    await producer.send(m);
    return m.getJMSDestination()!.name;
  };
  assert.deepEqual(
    [await sentTo(), await sentTo()],
    ['m1', 'm2'],
    'none has consumers: all members take turns',
  );
  session.createConsumer(new Queue('m2'));
  assert.deepEqual([await sentTo(), await sentTo(), await sentTo()], ['m2', 'm2', 'm2']);
});

test('distributed - a consumer is pinned to a member, members without consumers first (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const dq = await t.engine.createDistributedDestination('queue', 'dq', [{ name: 'm1' }, { name: 'm2' }]);
  const session = t.connect().createSession();
  const first = session.createConsumer(dq);
  const second = session.createConsumer(dq);
  assert.deepEqual([first.getDestination().name, second.getDestination().name].sort(), ['m1', 'm2']);
});

test('distributed - a distributed topic delivers to all members; members are addressable as name/member (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const dt = await t.engine.createDistributedDestination('topic', 'prices', [
    { name: 'prices.east' },
    { name: 'prices.west' },
  ]);
  const session = t.connect().createSession();
  const east = session.createConsumer(new Topic('prices/prices.east'));
  const west = session.createConsumer(new Topic('prices.west'));
  await session.createProducer(dt).send(new TextMessage('tick'));
  assert.equal(text(await east.receiveNoWait()), 'tick');
  assert.equal(text(await west.receiveNoWait()), 'tick');
});

test('distributed - a member cannot be deleted while it belongs to a distributed destination (DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createDistributedDestination('queue', 'dq', [{ name: 'm1' }]);
  await assert.rejects(
    t.engine.deleteDestination('queue://m1'),
    /member of distributed destination 'queue:\/\/dq'/,
  );
  await t.engine.deleteDestination('queue://dq');
  await t.engine.deleteDestination('queue://m1');
});

test('distributed - bad definitions are refused: no members, zero weight (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await assert.rejects(t.engine.createDistributedDestination('queue', 'dq', []), /needs at least one member/);
  await assert.rejects(
    t.engine.createDistributedDestination('queue', 'dq', [{ name: 'm', weight: 0 }]),
    /weight 0 is not valid/,
  );
});

test('distributed - a name of the form distributed/member that names no member is refused, never auto-created (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createDistributedDestination('queue', 'dq', [{ name: 'dq.m1' }]);
  const session = t.connect().createSession();
  for (const name of ['dq/nope', 'nodq/dq.m1', 'dq/dq.m1/x']) {
    await assert.rejects(
      session.createProducer(null).send(new Queue(name), new TextMessage('x')),
      InvalidDestinationError,
      name,
    );
    assert.throws(() => session.createConsumer(new Queue(name)), InvalidDestinationError, name);
  }
  await assert.rejects(t.engine.createQueue('a/b'), InvalidDestinationError);
  assert.deepEqual(
    t.engine.destinations().map((d) => d.toString()),
    ['queue://dq.m1'],
  );
  await session.createProducer(new Queue('dq/dq.m1')).send(new TextMessage('to the member'));
  assert.equal(t.engine.destinationStatistics('queue://dq.m1').messagesCurrent, 1);
});

test('distributed - durable and shared subscriptions on a distributed topic are refused, pointing at its members, and create no topic of that name (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const dt = await t.engine.createDistributedDestination('topic', 'dt', [{ name: 'dt.a' }, { name: 'dt.b' }]);
  const session = t.connect({ clientId: 'c' }).createSession();
  const refused =
    /distributed topic 'topic:\/\/dt': make it on one of its members \('topic:\/\/dt\/dt.a', 'topic:\/\/dt\/dt.b'\)/;
  assert.throws(() => session.createDurableSubscriber(new Topic('dt'), 's'), InvalidDestinationError);
  assert.throws(() => session.createDurableSubscriber(new Topic('dt'), 's'), refused);
  assert.throws(() => session.createSharedConsumer(new Topic('dt'), 's'), refused);
  assert.throws(() => session.createSharedDurableConsumer(new Topic('dt'), 's'), refused);
  await assert.rejects(t.engine.createTopic('dt'), InvalidDestinationError);
  assert.deepEqual(
    t.engine
      .destinations()
      .map((d) => d.toString())
      .sort(),
    ['topic://dt.a', 'topic://dt.b'],
  );
  const durable = session.createDurableSubscriber(new Topic('dt/dt.a'), 's');
  await session.createProducer(dt).send(new TextMessage('to every member'));
  assert.equal(text(await durable.receiveNoWait()), 'to every member');
});

/** A seeded source of uniform numbers (mulberry32), so a random run is the same every time. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

test('distributed - weighted random picks the member whose share of the total weight the random number falls in (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const script = [0, 0.2, 0.25, 0.5, 0.99];
  const t = testEngine({}, { random: () => script.shift()! });
  cleanup(() => t.close());
  const dq = await t.engine.createDistributedDestination(
    'queue',
    'dq',
    [
      { name: 'dq.a', weight: 1 },
      { name: 'dq.b', weight: 3 },
    ],
    { loadBalancing: 'random' },
  );
  const producer = t.connect().createSession().createProducer(dq);
  const members: string[] = [];
  for (let i = 0; i < 5; i++) {
    const m = new TextMessage(`m${i}`);
    await producer.send(m);
    members.push(m.getJMSDestination()!.name);
  }
  assert.deepEqual(members, ['dq.a', 'dq.a', 'dq.b', 'dq.b', 'dq.b']);
});

test('distributed - weighted random spreads sends in proportion to the weights in the long run (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({}, { random: seeded(42) });
  cleanup(() => t.close());
  const dq = await t.engine.createDistributedDestination(
    'queue',
    'dq',
    [
      { name: 'dq.a', weight: 2 },
      { name: 'dq.b', weight: 5 },
      { name: 'dq.c', weight: 3 },
    ],
    { loadBalancing: 'random' },
  );
  const producer = t.connect().createSession().createProducer(dq);
  const sends = 10_000;
  for (let i = 0; i < sends; i++)
    await producer.send(new TextMessage('x'), { deliveryMode: DeliveryMode.NON_PERSISTENT });
  const share = (name: string) => t.engine.destinationStatistics(`queue://${name}`).messagesCurrent / sends;
  for (const [name, weight] of [
    ['dq.a', 0.2],
    ['dq.b', 0.5],
    ['dq.c', 0.3],
  ] as const)
    assert.ok(Math.abs(share(name) - weight) < 0.02, `${name}: ${share(name)} vs ${weight}`);
});

test('distributed - new consumers are balanced over the members without consumers, not always given the first of them (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const dq = await t.engine.createDistributedDestination('queue', 'dq', [
    { name: 'm1' },
    { name: 'm2' },
    { name: 'm3' },
  ]);
  const session = t.connect().createSession();
  const pinned = (consumer: { getDestination(): { name: string } }) => consumer.getDestination().name;
  const first = session.createConsumer(dq);
  assert.equal(pinned(first), 'm1');
  await first.close();
  assert.equal(pinned(session.createConsumer(dq)), 'm2', 'the next idle member in turn, not m1 again');
  assert.equal(pinned(session.createConsumer(dq)), 'm3');
  assert.equal(pinned(session.createConsumer(dq)), 'm1', 'the only member left without consumers');
});

test('distributed - with weighted random, a new consumer goes to a random member among those without consumers (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const script = [0.9, 0.9];
  const t = testEngine({}, { random: () => script.shift()! });
  cleanup(() => t.close());
  const dq = await t.engine.createDistributedDestination(
    'queue',
    'dq',
    [{ name: 'm1' }, { name: 'm2' }, { name: 'm3' }],
    { loadBalancing: 'random' },
  );
  const session = t.connect().createSession();
  assert.equal(session.createConsumer(dq).getDestination().name, 'm3');
  assert.equal(session.createConsumer(dq).getDestination().name, 'm2', 'm3 has a consumer now');
});

test('distributed - the messages of a unit of order all go to one member, so two of them are never out at once on two members (ORD-4, DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const dq = await t.engine.createDistributedDestination('queue', 'dq', [{ name: 'dq.a' }, { name: 'dq.b' }]);
  const consumers = [t.connect(), t.connect()].map((c) =>
    c.createSession(false, Session.CLIENT_ACKNOWLEDGE).createConsumer(dq),
  );
  assert.deepEqual(consumers.map((c) => c.getDestination().name).sort(), ['dq.a', 'dq.b']);
  const producer = t.connect().createSession().createProducer(dq);
  for (const body of ['g0', 'g1']) {
    const m = new TextMessage(body);
    m.setStringProperty('JMSXGroupID', 'g');
    await producer.send(m);
  }
  const received = await Promise.all(consumers.map((c) => c.receiveNoWait()));
  assert.deepEqual(received.map(text).sort(), ['g0', null], 'only the first of the unit is out');
  const holder = consumers[received.findIndex((m) => m !== null)]!;
  await received.find((m) => m !== null)!.acknowledge();
  assert.equal(text(await holder.receiveNoWait()), 'g1', 'the next of the unit, on the same member');
});

test('distributed - a unit of order keeps to its member whatever the load balancing, while units spread over the members (ORD-4, DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const dq = await t.engine.createDistributedDestination('queue', 'dq', [
    { name: 'dq.a' },
    { name: 'dq.b', weight: 2 },
  ]);
  const session = t.connect().createSession();
  session.createConsumer(new Queue('dq.a'));
  const producer = session.createProducer(dq);
  const memberOf = new Map<string, Set<string>>();
  for (let round = 0; round < 5; round++) {
    for (let unit = 0; unit < 12; unit++) {
      const m = new TextMessage('x');
      m.setIntProperty('JMSXGroupID', unit);
      await producer.send(m);
      const members = memberOf.get(String(unit)) ?? new Set<string>();
      memberOf.set(String(unit), members.add(m.getJMSDestination()!.name));
    }
  }
  for (const [unit, members] of memberOf)
    assert.equal(members.size, 1, `unit ${unit}: ${[...members].join(', ')}`);
  const used = new Set([...memberOf.values()].flatMap((members) => [...members]));
  assert.deepEqual([...used].sort(), ['dq.a', 'dq.b'], 'units are spread, dq.b without consumers included');
});

test("distributed - units of order follow the members' unitOfOrderProperty, and none when it is empty (ORD-4, DST-8)", async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const byOrder = await t.engine.createDistributedDestination(
    'queue',
    'by-order',
    [{ name: 'o.a' }, { name: 'o.b' }],
    {
      memberOptions: { unitOfOrderProperty: 'orderId' },
    },
  );
  const off = await t.engine.createDistributedDestination(
    'queue',
    'off',
    [{ name: 'f.a' }, { name: 'f.b' }],
    {
      memberOptions: { unitOfOrderProperty: '' },
    },
  );
  const session = t.connect().createSession();
  const sentTo = async (destination: Queue, property: string) => {
    const m = new TextMessage('x');
    m.setStringProperty(property, 'unit-1');
    await session.createProducer(destination).send(m);
    return m.getJMSDestination()!.name;
  };
  const orders = [];
  for (let i = 0; i < 4; i++) orders.push(await sentTo(byOrder as Queue, 'orderId'));
  assert.equal(new Set(orders).size, 1, 'one member for the unit');
  const groups = [];
  for (let i = 0; i < 4; i++) groups.push(await sentTo(byOrder as Queue, 'JMSXGroupID'));
  assert.equal(new Set(groups).size, 2, 'JMSXGroupID is not the unit here: round-robin');
  const unordered = [];
  for (let i = 0; i < 4; i++) unordered.push(await sentTo(off as Queue, 'JMSXGroupID'));
  assert.equal(new Set(unordered).size, 2, 'units are off: round-robin');
});

test('distributed - the sends of one transaction to a distributed queue all go to one member (transaction affinity, DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const dq = await t.engine.createDistributedDestination('queue', 'dq', [{ name: 'dq.a' }, { name: 'dq.b' }]);
  const tx = t.connect().createSession(true);
  const producer = tx.createProducer(dq);
  const transaction = async () => {
    const members = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const m = new TextMessage(`m${i}`);
      await producer.send(m);
      members.add(m.getJMSDestination()!.name);
    }
    return [...members];
  };
  const first = await transaction();
  assert.equal(first.length, 1, `one member: ${first.join(', ')}`);
  await tx.commit();
  const second = await transaction();
  assert.equal(second.length, 1, `one member: ${second.join(', ')}`);
  assert.notDeepEqual(second, first, 'the next transaction is balanced anew');
  await tx.rollback();
  const third = await transaction();
  assert.deepEqual(third, first, 'after a rollback too');
  const plain = t.connect().createSession().createProducer(dq);
  const spread = new Set<string>();
  for (let i = 0; i < 2; i++) {
    const m = new TextMessage('x');
    await plain.send(m);
    spread.add(m.getJMSDestination()!.name);
  }
  assert.equal(spread.size, 2, 'outside a transaction every send is balanced');
  await tx.commit();
  assert.equal(t.engine.destinationStatistics(`queue://${first[0]}`).messagesCurrent, 4 + 4 + 1);
});

test('distributed - a message published to a member of a distributed topic reaches the other members too (DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createTopic('dt.a');
  const session = t.connect({ clientId: 'c' }).createSession();
  const early = session.createProducer(new Topic('dt.a'));
  await early.send(new TextMessage('before'));
  await t.engine.createDistributedDestination('topic', 'dt', [
    { name: 'dt.a' },
    { name: 'dt.b' },
    { name: 'dt.c' },
  ]);
  const subscribers = [
    session.createConsumer(new Topic('dt.a')),
    session.createConsumer(new Topic('dt/dt.b')),
    session.createDurableSubscriber(new Topic('dt.c'), 'on-c'),
  ];
  const receivedByAll = async (expected: string) => {
    for (const subscriber of subscribers) {
      assert.equal(text(await subscriber.receiveNoWait()), expected);
      assert.equal(await subscriber.receiveNoWait(), null, 'once');
    }
  };
  await early.send(new TextMessage('direct'));
  await receivedByAll('direct');
  await session.createProducer(new Topic('dt/dt.b')).send(new TextMessage('by alias'));
  await receivedByAll('by alias');
  await session.createProducer(new Topic('dt')).send(new TextMessage('distributed'));
  await receivedByAll('distributed');
  await t.engine.deleteDestination('topic://dt');
  await early.send(new TextMessage('alone again'));
  assert.equal(text(await subscribers[0]!.receiveNoWait()), 'alone again');
  assert.equal(await subscribers[2]!.receiveNoWait(), null, 'no longer forwarded');
});
