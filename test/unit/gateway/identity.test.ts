/** The gateway's users and application ids (MSG-2): configured users, the factory's id, bridges naming themselves. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/load-config.js';
import { Gateway, silentGatewayLogger } from '../../../src/gateway/index.js';
import { JMSSecurityError, TextMessage } from '../../../src/index.js';
import { fakeRegistry } from '../config/fake-connectors.js';

test("gateway - configured users authenticate connections, the factory's application id and each bridge's name become JMSXAppID (MSG-2)", async () => {
  const { config } = parseConfig(
    [
      'store: { memory: true }',
      'admin: { enabled: false }',
      'connectionFactory: { applicationId: order-entry }',
      'security:',
      '  users: [{ name: alice, password: "${ALICE_PASSWORD}" }]',
      'destinations:',
      '  queues: [{ name: in }, { name: out }]',
      'bridges:',
      '  - name: in-to-out',
      '    source: { type: jms, destination: queue://in }',
      '    target: { type: jms, destination: queue://out }',
    ].join('\n'),
    'gw.yaml',
    { registry: fakeRegistry(), env: { ALICE_PASSWORD: 'pa55-word' } },
  );
  const gateway = await Gateway.start(config, silentGatewayLogger);
  const connection = gateway.connectionFactory.createConnection('alice', 'pa55-word');
  try {
    assert.throws(() => gateway.connectionFactory.createConnection('alice', 'nope'), JMSSecurityError);
    connection.start();
    const session = connection.createSession();
    // A queue no bridge reads.
    const plain = session.createQueue('plain');
    await session.createProducer(plain).send(new TextMessage('order'));
    const sent = await session.createConsumer(plain).receive(5_000);
    assert.equal(sent?.getStringProperty('JMSXUserID'), 'alice');
    assert.equal(sent?.getStringProperty('JMSXAppID'), 'order-entry');

    await session.createProducer(session.createQueue('in')).send(new TextMessage('bridged'));
    const bridged = await session.createConsumer(session.createQueue('out')).receive(5_000);
    assert.equal((bridged as TextMessage | null)?.getText(), 'bridged');
    assert.equal(bridged?.getStringProperty('JMSXAppID'), 'in-to-out', 'the bridge names itself');
    assert.equal(
      bridged?.getStringProperty('JMSXUserID'),
      'alice',
      'the sender, kept by the anonymous bridge',
    );
  } finally {
    await connection.close();
    await gateway.stop(5_000);
  }
});
