/**
 * Active/standby high availability with real processes, on the real PostgreSQL, RabbitMQ and
 * Kafka: two `jms-gateway run` instances of one group on a route RabbitMQ → internal persistent
 * queue → Kafka at exactly-once, under load. The active one is killed (kill -9), paused past its
 * lease (SIGSTOP), or steps down; each time a standby takes over, and the test counts at Kafka
 * what arrived: nothing lost, nothing twice, every group in order. Takeover times are printed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { publishUntilStopped } from '../helpers/keyed-flow.js';
import { eventually, runCli } from './gateway-harness.js';
import {
  LEASE_MS,
  TAKEOVER_BOUND_MS,
  assertDelivered,
  drained,
  pause,
  skip,
  status,
  twoInstances,
} from './ha-harness.js';

test(
  'ha - kill -9 of the active three times under load: a standby takes over each time, nothing lost, nothing twice, order kept (RabbitMQ → queue → Kafka, exactly-once)',
  { skip, timeout: 300_000 },
  async (t) => {
    const { route, group, cleanup } = await twoInstances(t);
    let active = await group.active();
    const publisher = await publishUntilStopped(route.amqpUrl, route.queue);
    cleanup(() => publisher.stop());
    const takeovers: number[] = [];
    for (const wait of [2_500, 1_500, 3_000]) {
      await pause(wait);
      const killedAt = Date.now();
      active.child.kill('SIGKILL');
      await active.exited;
      active = await group.active();
      takeovers.push(Date.now() - killedAt);
      // Two instances again, as an operator's supervisor would restart the killed one.
      await group.start();
    }
    const sent = (await publisher.stop()).map((line) => line.slice('SENT '.length));
    const atTarget = await drained(route, sent);
    t.diagnostic(`takeover after kill -9: ${takeovers.map((ms) => `${ms} ms`).join(', ')}`);
    console.log(`ha takeover after kill -9 (lease ${LEASE_MS} ms): ${takeovers.join(', ')} ms`);
    assertDelivered(t, sent, atTarget);
    for (const ms of takeovers) assert.ok(ms < TAKEOVER_BOUND_MS, `a takeover took ${ms} ms`);
  },
);

test(
  'ha - an active paused past its lease (SIGSTOP) is replaced; resumed, it finds itself a standby and writes nothing',
  { skip, timeout: 240_000 },
  async (t) => {
    const { route, group, cleanup } = await twoInstances(t);
    const paused = await group.active();
    const pausedEpoch = (await status(paused)).epoch;
    const publisher = await publishUntilStopped(route.amqpUrl, route.queue);
    cleanup(() => publisher.stop());
    await pause(2_000);
    const stoppedAt = Date.now();
    paused.child.kill('SIGSTOP');
    const next = await group.active(paused);
    const takeover = Date.now() - stoppedAt;
    await pause(2_000);
    paused.child.kill('SIGCONT');
    const resumed = await eventually(async () => {
      const now = await status(paused);
      return now.role === 'standby' ? now : undefined;
    }, 'the resumed instance a standby');
    assert.ok(resumed.reason !== undefined, 'it says why it is a standby');
    const current = await status(next);
    assert.equal(current.role, 'active');
    assert.ok(current.epoch! > pausedEpoch!, 'the new active holds a later epoch');
    // The admin API is down for a moment while the instance changes role (the standby's binds the port once the gateway's closed).
    const refused = await eventually(
      () => fetch(`${paused.admin}/destinations`),
      'the resumed instance answering',
    );
    assert.equal(refused.status, 503, 'the resumed instance serves no destinations');
    const sent = (await publisher.stop()).map((line) => line.slice('SENT '.length));
    const atTarget = await drained(route, sent);
    t.diagnostic(`takeover after SIGSTOP: ${takeover} ms; the resumed one: ${resumed.reason}`);
    assertDelivered(t, sent, atTarget);
  },
);

test(
  'ha - step-down from the CLI hands over to the standby; ha status names the roles',
  { skip, timeout: 120_000 },
  async (t) => {
    const { group, space } = await twoInstances(t);
    const first = await group.active();
    const stepDown = await runCli(['ha', 'step-down', '--url', first.admin], space.dir);
    assert.equal(stepDown.code, 0, stepDown.stderr);
    assert.match(stepDown.stdout, /stepping down/);
    const second = await group.active(first);
    assert.notEqual(second, first);
    const shown = await runCli(['ha', 'status', '--url', first.admin], space.dir);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^role: standby/m);
    assert.match(shown.stdout, /why: stepped down/);
    assert.match(
      shown.stdout,
      new RegExp(`lease: held by ${(await status(second)).instanceId.replace(/[.]/g, '\\.')}`),
    );
    const again = await runCli(['ha', 'step-down', '--url', first.admin], space.dir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /not active: there is nothing to hand over/);
    const ready = (await (await fetch(`${first.admin}/ready`)).json()) as { role: string };
    assert.equal(ready.role, 'standby');
    const metrics = await (await fetch(`${second.admin}/metrics`)).text();
    assert.match(metrics, /^jms_gateway_ha_role\{role="active"\} 1$/m);
  },
);
