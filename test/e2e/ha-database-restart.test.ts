/**
 * The database restarted under a high-availability group in mid-flow: the active either rides the
 * outage out or hands over once the database is back, and nothing is lost, duplicated or
 * reordered at Kafka. It restarts the machine's PostgreSQL, so test/run.sh runs it alone.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { publishUntilStopped } from '../helpers/keyed-flow.js';
import { assertDelivered, drained, pause, skip, status, twoInstances } from './ha-harness.js';

/** The local cluster `pg_ctlcluster` restarts; undefined when PostgreSQL is not run from here. */
function localCluster(): string | undefined {
  if (process.env.PG_URL !== undefined && !/@(127\.0\.0\.1|localhost)[:/]/.test(process.env.PG_URL))
    return undefined;
  try {
    return readdirSync('/etc/postgresql')[0];
  } catch {
    return undefined;
  }
}

const cluster = localCluster();

test(
  'ha - the database restarted in mid-flow: the group goes on with one active, nothing lost, nothing twice, order kept',
  {
    skip: skip || (cluster === undefined ? 'PostgreSQL is not a local cluster this test may restart' : false),
    timeout: 240_000,
  },
  async (t) => {
    const { route, group, cleanup } = await twoInstances(t);
    const before = await group.active();
    const epochBefore = (await status(before)).epoch!;
    const publisher = await publishUntilStopped(route.amqpUrl, route.queue);
    cleanup(() => publisher.stop());
    await pause(2_000);
    const restartedAt = Date.now();
    await promisify(execFile)('pg_ctlcluster', [
      '--skip-systemctl-redirect',
      cluster!,
      'main',
      'restart',
      '-m',
      'fast',
    ]);
    const after = await group.active(undefined, 60_000);
    const back = Date.now() - restartedAt;
    const epochAfter = (await status(after)).epoch!;
    await pause(2_000);
    const sent = (await publisher.stop()).map((line) => line.slice('SENT '.length));
    const atTarget = await drained(route, sent);
    t.diagnostic(
      after === before && epochAfter === epochBefore
        ? `the active rode the restart out; one active again ${back} ms after the restart began`
        : `the group handed over (epoch ${epochBefore} → ${epochAfter}); one active ${back} ms after the restart began`,
    );
    assert.ok(epochAfter >= epochBefore);
    assertDelivered(t, sent, atTarget);
  },
);
