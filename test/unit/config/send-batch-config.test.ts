import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load-config.js';
import { fakeRegistry } from './fake-connectors.js';

const options = { registry: fakeRegistry(), env: {} };
const route =
  'source: { type: jms, destination: queue://in }, target: { type: jms, destination: queue://out }';

test('config - a bridge takes sendBatch, with defaults for what it leaves out', () => {
  const { config } = parseConfig(
    [
      'bridges:',
      `  - { name: b1, ${route}, sendBatch: { maxMessages: 1 } }`,
      `  - { name: b2, ${route} }`,
      '',
    ].join('\n'),
    'gw.yaml',
    options,
  );
  const [one, two] = config.bridges;
  assert.deepEqual(one!.sendBatch, { maxMessages: 1, maxBytes: 1_048_576, lingerMs: 0 });
  assert.deepEqual(two!.sendBatch, { maxMessages: 500, maxBytes: 1_048_576, lingerMs: 0 });
  assert.equal(two!.maxInFlight, 1_000, 'room for two full batches');
});

test('config - a bad sendBatch setting is refused at its place', () => {
  assert.throws(
    () =>
      parseConfig(
        ['bridges:', `  - { name: b1, ${route}, sendBatch: { maxMessages: 0, lingerMs: -5 } }`, ''].join(
          '\n',
        ),
        'gw.yaml',
        options,
      ),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      const problems = error.problems.join('\n');
      assert.match(problems, /bridges\[0\]\.sendBatch\.maxMessages/);
      assert.match(problems, /bridges\[0\]\.sendBatch\.lingerMs/);
      return true;
    },
  );
});
