/** The `security` section and `connectionFactory.applicationId` (MSG-2). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load-config.js';
import { fakeRegistry } from './fake-connectors.js';

const yaml = (...lines: string[]) => `${lines.join('\n')}\n`;

function problemsOf(text: string, env: Record<string, string> = {}): readonly string[] {
  try {
    parseConfig(text, 'gw.yaml', { registry: fakeRegistry(), env });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

test('config - security.users takes passwords from environment variables and the application id as given (MSG-2)', () => {
  const { config } = parseConfig(
    yaml(
      'connectionFactory: { applicationId: order-gateway }',
      'security:',
      '  users:',
      '    - { name: alice, password: "${ALICE_PASSWORD}" }',
    ),
    'gw.yaml',
    { registry: fakeRegistry(), env: { ALICE_PASSWORD: 'correct horse' } },
  );
  assert.deepEqual(config.security.users, [{ name: 'alice', password: 'correct horse' }]);
  assert.equal(config.connectionFactory.applicationId, 'order-gateway');
  assert.ok(config.secrets.has('correct horse'), 'the password is a secret, masked in logs');
});

test('config - a password written in the file is refused at its place, without echoing it (MSG-2)', () => {
  const problems = problemsOf(
    yaml(
      'security:',
      '  users:',
      '    - name: alice',
      '      password: hunter2-in-the-file',
      '    - name: bob',
      '      password: "prefix-${BOB_PASSWORD}"',
    ),
    { BOB_PASSWORD: 'from-env' },
  );
  assert.deepEqual(
    problems.map((problem) => problem.replace(/: must come.*/, '')),
    ['gw.yaml:4:17: security.users[0].password', 'gw.yaml:6:17: security.users[1].password'],
  );
  assert.match(problems[0]!, /must come from an environment variable: write it as \$\{NAME\}/);
  assert.ok(problems.every((problem) => !problem.includes('hunter2') && !problem.includes('from-env')));
});

test('config - a user listed twice is refused (MSG-2)', () => {
  const problems = problemsOf(
    yaml(
      'security:',
      '  users:',
      '    - { name: alice, password: "${A}" }',
      '    - { name: alice, password: "${B}" }',
    ),
    { A: 'one-password', B: 'two-password' },
  );
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /^gw\.yaml:4:\d+: security\.users\[1\]\.name: user 'alice' is listed twice/);
});
