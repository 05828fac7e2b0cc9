import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load-config.js';

test('config - the embedded default configuration loads', async () => {
  const { loadConfig } = await import('../../../src/config/load-config.js');
  const config = await loadConfig('config/gateway.yaml');
  assert.ok(config.destinations.queues.length > 0);
});

test('config - every problem is listed with file, line, column and path', () => {
  const text = [
    'destinations:',
    '  queues:',
    '    - name: ""',
    '    - name: q',
    '      options:',
    '        redeliveryLimit: many',
    '  topicz: []',
    'extra: 1',
  ].join('\n');
  let error: unknown;
  try {
    parseConfig(text, 'gw.yaml');
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof ConfigError);
  assert.deepEqual(error.problems, [
    'gw.yaml:3:13: destinations.queues[0].name: expected a non-empty string',
    'gw.yaml:6:26: destinations.queues[1].options.redeliveryLimit: expected a number',
    'gw.yaml:7:3: destinations.topicz: unknown setting (known: queues, topics)',
    'gw.yaml:8:1: extra: unknown setting (known: admin, destinations, store)',
  ]);
});

test('config - malformed YAML is reported with its position', () => {
  assert.throws(
    () => parseConfig('destinations: [\n', 'broken.yaml'),
    /^ConfigError: broken\.yaml:\d+:\d+: /,
  );
});
