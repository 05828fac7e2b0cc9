import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, type LoadOptions, parseConfig } from '../../../src/config/load-config.js';
import { fakeRegistry } from './fake-connectors.js';

const options: LoadOptions = { registry: fakeRegistry(), env: {} };

function problemsOf(text: string): readonly string[] {
  try {
    parseConfig(text, 'gw.yaml', options);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

test('config - high availability is off by default, with a lease of 6 s renewed every 2 s', () => {
  const { config } = parseConfig('{}\n', 'gw.yaml', options);
  assert.deepEqual(config.ha, {
    enabled: false,
    group: 'default',
    leaseMs: 6_000,
    renewEveryMs: 2_000,
    claimEveryMs: 1_000,
  });
});

test('config - high availability on a store the instances cannot share is refused', () => {
  assert.deepEqual(problemsOf('ha: { enabled: true }\n'), [
    'gw.yaml:1:16: ha.enabled: high availability needs a store the instances share: set store.type: postgres (the file store belongs to one process)',
  ]);
});

test('config - a lease renewed less often than it lasts is refused', () => {
  const problems = problemsOf('ha: { leaseMs: 3000, renewEveryMs: 3000 }\n');
  assert.deepEqual(problems, []);
  assert.match(
    problemsOf(
      'store: { type: postgres, url: "postgres://db/gw" }\nha: { enabled: true, leaseMs: 3000, renewEveryMs: 3000 }\n',
    ).join('\n'),
    /ha\.renewEveryMs: the lease is renewed every 3000 ms but lasts 3000 ms: renew more often than it lasts/,
  );
});
