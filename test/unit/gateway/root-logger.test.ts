import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinRegistry } from '../../../connectors/index.js';
import { ConfigError, parseConfig } from '../../../src/config/load-config.js';
import { SecretMask } from '../../../src/gateway/secret-mask.js';
import { LogLevelError, createRootLogger, effectiveLogLevel } from '../../../src/gateway/root-logger.js';

/** An output that keeps what is written, as a terminal (`isTTY`) or a pipe. */
function capture(isTTY = false): { write(text: string): void; readonly isTTY: boolean; lines: string[] } {
  const lines: string[] = [];
  return { isTTY, lines, write: (text) => void lines.push(text) };
}

const logSettings = (yaml: string, env: Record<string, string> = {}) =>
  parseConfig(yaml, 'gw.yaml', { registry: builtinRegistry, env }).config.log;

test('logging - log.level sets the least severe level written; the default is info', () => {
  assert.deepEqual(logSettings('{}'), { level: 'info', format: 'auto' });
  const output = capture();
  const logger = createRootLogger({
    ...logSettings('log: { level: warn }'),
    mask: new SecretMask(),
    env: {},
    output,
  });
  logger.info('lifecycle');
  logger.warn('recovered');
  logger.error('act now');
  assert.deepEqual(
    output.lines.map((line) => (JSON.parse(line) as { msg: string }).msg),
    ['recovered', 'act now'],
  );
});

test('logging - LOG_LEVEL in the environment wins over log.level, and --log-level over both', () => {
  assert.equal(effectiveLogLevel('info', { LOG_LEVEL: 'debug' }), 'debug');
  assert.equal(effectiveLogLevel('info', { LOG_LEVEL: 'WARN ' }), 'warn');
  assert.equal(effectiveLogLevel('warn', { LOG_LEVEL: '' }), 'warn');
  assert.equal(effectiveLogLevel('info', { LOG_LEVEL: 'debug' }, 'error'), 'error');
  const output = capture();
  const logger = createRootLogger({
    level: 'info',
    format: 'json',
    mask: new SecretMask(),
    env: { LOG_LEVEL: 'debug' },
    output,
  });
  logger.debug('per message');
  assert.equal(output.lines.length, 1);
});

test('logging - a bad level is a positioned configuration error, or a one-line start error from LOG_LEVEL', () => {
  assert.throws(
    () => logSettings('store: { memory: true }\nlog: { level: loud }'),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.length === 1 &&
      error.problems[0] ===
        "gw.yaml:2:15: log.level: expected one of 'trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'",
  );
  assert.throws(
    () =>
      createRootLogger({ level: 'info', format: 'json', mask: new SecretMask(), env: { LOG_LEVEL: 'loud' } }),
    (error: unknown) =>
      error instanceof LogLevelError &&
      error.message ===
        "LOG_LEVEL 'loud' is not a log level (expected one of trace, debug, info, warn, error, fatal, silent)",
  );
  assert.throws(
    () => effectiveLogLevel('info', {}, 'verbose'),
    /^LogLevelError: --log-level 'verbose' is not a log level/,
  );
});

test('logging - auto format writes pretty lines on a terminal outside production and JSON otherwise', () => {
  const line = (format: 'auto' | 'json' | 'pretty', isTTY: boolean, env: Record<string, string>) => {
    const output = capture(isTTY);
    createRootLogger({ level: 'info', format, mask: new SecretMask(), env, output }).info(
      { bridge: 'b1' },
      'bridge started',
    );
    return output.lines.join('');
  };
  const isJson = (text: string) => {
    try {
      return (JSON.parse(text) as { msg?: string }).msg === 'bridge started';
    } catch {
      return false;
    }
  };
  const pretty = line('auto', true, {});
  assert.ok(!isJson(pretty) && pretty.includes('bridge started') && pretty.includes('INFO'), pretty);
  assert.ok(isJson(line('auto', true, { NODE_ENV: 'production' })));
  assert.ok(isJson(line('auto', false, {})));
  assert.ok(isJson(line('json', true, {})));
  const forced = line('pretty', false, {});
  assert.ok(!isJson(forced) && forced.includes('bridge started'), forced);
});

test('logging - every line is masked on its way out: URL passwords and secret values, also in nested fields and errors', () => {
  const output = capture();
  const mask = new SecretMask(['tok-3f9a2c71e4']);
  const logger = createRootLogger({ level: 'info', format: 'json', mask, env: {}, output });
  const error = new Error('cannot connect to amqp://gw:pa55-word@10.1.2.3:5672/prod');
  logger.warn(
    { err: error, request: { headers: { authorization: 'Bearer tok-3f9a2c71e4' } }, broker: '10.1.2.3:5672' },
    'bridge cannot connect',
  );
  const text = output.lines.join('');
  assert.ok(!text.includes('pa55-word') && !text.includes('tok-3f9a2c71e4'), text);
  assert.ok(text.includes('amqp://gw:***@10.1.2.3:5672/prod'), text);
  assert.ok(text.includes('"broker":"10.1.2.3:5672"'), text);
  assert.ok(text.includes('Bearer ***'), text);
  // Still one JSON object per line.
  assert.equal((JSON.parse(text) as { msg: string }).msg, 'bridge cannot connect');
});
