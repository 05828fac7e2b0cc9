import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConnectorRegistry } from '../../../src/spi/connector-registry.js';
import { checkConnections } from '../../../src/gateway/index.js';
import {
  type CheckContext,
  type ConnectorDefinition,
  type Sink,
  type Source,
  defineSchema,
} from '../../../src/spi/index.js';

interface FakeConfig {
  readonly url: string;
  readonly topic: string;
}

const schema = defineSchema<FakeConfig>({
  url: { type: 'string', required: true, description: 'Broker URL.' },
  topic: { type: 'string', required: true, description: 'The topic.' },
});

/** Never connected: `validate`'s dry build creates endpoints, a check only asks the connector. */
const idle = (): Source & Sink => ({
  connect: () => Promise.reject(new Error('a check connects no endpoint')),
  receive: () => Promise.reject(new Error('a check reads nothing')),
  send: () => Promise.reject(new Error('a check sends nothing')),
  close: () => Promise.resolve(),
});

/** A broker that is down at `fake://down` and has every topic but `missing`; records each check. */
function fakeConnector(
  checked: { topic: string; role: CheckContext['role'] }[],
): ConnectorDefinition<FakeConfig> {
  return {
    type: 'fake',
    summary: 'A fake broker with a connection check.',
    config: schema,
    createSource: idle,
    createSink: idle,
    check: (config, context) => {
      checked.push({ topic: config.topic, role: context.role });
      if (config.url === 'fake://down')
        return Promise.resolve({ problems: [{ field: 'url', message: 'cannot connect' }], notes: [] });
      return Promise.resolve({
        problems:
          config.topic === 'missing' ? [{ field: 'topic', message: `topic 'missing' does not exist` }] : [],
        notes: [`topic '${config.topic}' checked`],
      });
    },
  };
}

const plainConnector: ConnectorDefinition<FakeConfig> = {
  type: 'plain',
  summary: 'A connector without a connection check.',
  config: schema,
  createSink: idle,
};

const YAML = [
  'store: { memory: true }',
  'connections:',
  '  down: { type: fake, url: fake://down }',
  'destinations: { queues: [{ name: x }] }',
  'bridges:',
  '  - name: a',
  '    source: { type: fake, url: fake://up, topic: missing }',
  '    target: { type: jms, destination: queue://x }',
  '  - name: b',
  '    source: { type: jms, destination: queue://x }',
  '    target: { type: fake, connection: down, topic: fine }',
  '    errorDestination: { type: plain, url: x, topic: errors }',
  '',
].join('\n');

/** `file:line:col` of the first `text` on 1-based `line` of YAML. */
function at(file: string, line: number, text: string): string {
  return `${file}:${line}:${YAML.split('\n')[line - 1]!.indexOf(text) + 1}`;
}

test('check --connect - each endpoint is checked in its role; problems land on the field, or on the connection that supplies it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'jms-gateway-check-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.yaml');
  await writeFile(file, YAML);
  const checked: { topic: string; role: CheckContext['role'] }[] = [];
  const registry = new ConnectorRegistry([fakeConnector(checked), plainConnector]);

  const report = await checkConnections(file, { registry, timeoutMs: 5_000 });

  assert.deepEqual(report.problems, [
    `${at(file, 3, 'fake://down')}: connections.down.url: cannot connect`,
    `${at(file, 7, 'missing')}: bridges[0].source.topic: topic 'missing' does not exist`,
  ]);
  assert.deepEqual(report.notes, [
    `${at(file, 7, '{ type: fake')}: bridges[0].source: topic 'missing' checked`,
    `${at(file, 12, '{ type: plain')}: bridges[1].errorDestination: connector 'plain' has no connection check: not checked`,
  ]);
  assert.deepEqual(checked, [
    { topic: 'missing', role: 'source' },
    { topic: 'fine', role: 'sink' },
  ]);
});

test('check --connect - a file that does not validate reports its problems and checks nothing', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'jms-gateway-check-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.yaml');
  await writeFile(file, YAML.replace('topic: missing', 'topik: missing'));
  const checked: { topic: string; role: CheckContext['role'] }[] = [];
  const report = await checkConnections(file, {
    registry: new ConnectorRegistry([fakeConnector(checked), plainConnector]),
  });
  assert.match(report.problems.join('\n'), /bridges\[0\]\.source\.topik: unknown setting/);
  assert.deepEqual(checked, []);
});
