import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { builtinRegistry } from '../../../connectors/index.js';
import { parseConfig } from '../../../src/config/load-config.js';
import { Gateway, SecretMask } from '../../../src/gateway/index.js';
import { createRootLogger } from '../../../src/gateway/root-logger.js';
import { uniqueName } from '../../helpers/names.js';
import { closedPort } from '../../helpers/ports.js';
import { type ChangeSource, until } from '../../helpers/until.js';

/**
 * The gateway on `yaml` with the built-in connectors, logging through the real root logger into
 * `lines`; `logged` tells of each line, for waiting on one. Stopped after the test.
 */
async function gatewayLogging(t: TestContext, yaml: string, env: Record<string, string>, token: string) {
  const { config } = parseConfig(yaml, 'gw.yaml', { registry: builtinRegistry, env });
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  const logged: ChangeSource = (wake) => {
    listeners.add(wake);
    return () => listeners.delete(wake);
  };
  const mask = new SecretMask();
  const logger = createRootLogger({
    ...config.log,
    mask,
    env: {},
    output: {
      write: (line) => {
        lines.push(line);
        for (const wake of listeners) wake();
      },
    },
  });
  const gateway = await Gateway.start(config, logger, { mask, adminToken: token, adminPort: 0 });
  t.after(() => gateway.stop(5_000));
  return { gateway, lines, logger, logged };
}

test('logging - a connection error to a broker from ${AMQP_URL} shows host and port, never the password', async (t) => {
  const port = await closedPort();
  const token = `tok-${uniqueName('admin')}`;
  const { gateway, lines, logger, logged } = await gatewayLogging(
    t,
    [
      'store: { memory: true }',
      'bridges:',
      '  - name: orders',
      `    source: { type: amqp, url: "\${AMQP_URL}", queue: ${uniqueName('q')} }`,
      '    target: { type: jms, destination: queue://orders }',
      '    reconnect: { minMs: 60000 }',
      '  - name: user-info',
      `    source: { type: amqp, url: "amqp://gw:\${AMQP_PASSWORD}@\${AMQP_HOST}:${port}", queue: ${uniqueName('q')} }`,
      '    target: { type: jms, destination: queue://orders }',
      '    reconnect: { minMs: 60000 }',
    ].join('\n'),
    {
      AMQP_URL: `amqp://gw:Sup3r-Secret@127.0.0.1:${port}/`,
      AMQP_PASSWORD: 'An0ther-Secret',
      AMQP_HOST: '127.0.0.1',
    },
    token,
  );
  const cannotConnect = (bridge: string) =>
    lines.find((line) => line.includes('bridge cannot connect') && line.includes(`"bridge":"${bridge}"`));
  await until(
    () => cannotConnect('orders') !== undefined && cannotConnect('user-info') !== undefined,
    'both warnings',
    [logged],
    20_000,
  );
  for (const bridge of ['orders', 'user-info'])
    assert.ok(cannotConnect(bridge)!.includes(`127.0.0.1:${port}`), cannotConnect(bridge));
  // A URL quoted in full by a client library keeps its user and host and loses its password.
  logger.warn({ url: `amqp://gw:Sup3r-Secret@127.0.0.1:${port}/`, header: `Bearer ${token}` }, 'client said');
  const all = lines.join('');
  assert.ok(all.includes(`amqp://gw:***@127.0.0.1:${port}/`), all);
  for (const secret of ['Sup3r-Secret', 'An0ther-Secret', token]) assert.ok(!all.includes(secret), secret);
  const view = JSON.stringify(gateway.control.list());
  assert.ok(view.includes(`127.0.0.1:${port}`) && !view.includes('Secret'), view);
});

test('logging - kafka brokers from ${KAFKA_BROKERS} stay readable in connection errors', async (t) => {
  const port = await closedPort();
  const { lines, logged } = await gatewayLogging(
    t,
    [
      'store: { memory: true }',
      'bridges:',
      '  - name: events',
      '    source: { type: jms, destination: queue://events }',
      `    target: { type: kafka, brokers: ["\${KAFKA_BROKERS}"], topic: ${uniqueName('t')}, retries: 1, connectionTimeout: 500 }`,
      '    reconnect: { minMs: 60000 }',
    ].join('\n'),
    { KAFKA_BROKERS: `127.0.0.1:${port}` },
    `tok-${uniqueName('admin')}`,
  );
  const warning = () => lines.find((line) => line.includes('bridge cannot connect'));
  await until(() => warning() !== undefined, 'the warning', [logged], 20_000);
  assert.ok(warning()!.includes(`127.0.0.1:${port}`), warning());
  assert.ok(!warning()!.includes('***'), warning());
});
