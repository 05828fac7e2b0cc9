import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { test } from 'node:test';
import { killGateway, type RunningGateway, runCli, startGateway, workspace } from './gateway-harness.js';

/**
 * An address of this machine that is not loopback, to listen on and connect to. Without one
 * (a machine with loopback only), the API listens on 0.0.0.0 (every interface, not loopback to the
 * gateway, so the token is required just the same) and the test connects through 127.0.0.1.
 */
function nonLoopbackAddress(): { listen: string; connect: string } {
  for (const entries of Object.values(networkInterfaces()))
    for (const entry of entries ?? [])
      if (entry.family === 'IPv4' && !entry.internal)
        return { listen: entry.address, connect: entry.address };
  return { listen: '0.0.0.0', connect: '127.0.0.1' };
}

test(
  'admin API - off loopback it refuses requests without the token and accepts them with it; the token never reaches the logs',
  { timeout: 90_000 },
  async () => {
    const address = nonLoopbackAddress();
    const token = randomBytes(24).toString('hex');
    const space = await workspace({
      'gateway.yaml': [
        'store: { path: ./data }',
        `admin: { host: "${address.listen}", port: 8161 }`,
        'destinations: { queues: [{ name: in }, { name: out }] }',
        'bridges:',
        '  - { name: route, source: { type: jms, destination: queue://in }, target: { type: jms, destination: queue://out } }',
        '',
      ].join('\n'),
    });
    const env = { JMS_GATEWAY_ADMIN_TOKEN: token };
    let gateway: RunningGateway | undefined;
    try {
      const running = await startGateway('gateway.yaml', space.dir, env);
      gateway = running;
      const url = new URL(running.admin);
      assert.equal(url.hostname, address.listen, 'the API listens where it was told');
      url.hostname = address.connect;
      const admin = url.origin;
      const get = (path: string, headers: Record<string, string> = {}) =>
        fetch(`${admin}${path}`, { headers });

      assert.equal((await get('/health')).status, 200, 'health needs no token');
      assert.equal((await get('/ready')).status, 200, 'readiness needs no token');
      for (const path of ['/destinations', '/bridges', '/metrics', '/openapi.json']) {
        const refused = await get(path);
        assert.equal(refused.status, 401, path);
        assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
        assert.equal(
          (await get(path, { authorization: `Bearer ${token}x` })).status,
          401,
          `${path}, wrong token`,
        );
        assert.equal((await get(path, { authorization: token })).status, 401, `${path}, not a bearer token`);
        assert.equal((await get(path, { authorization: `Bearer ${token}` })).status, 200, `${path}, token`);
      }
      const send = (headers: Record<string, string>) =>
        fetch(`${admin}/destinations/queue/in/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ type: 'text', body: 'hello' }),
        });
      assert.equal((await send({})).status, 401);
      assert.equal((await send({ authorization: `Bearer ${token}` })).status, 201);
      assert.equal(
        (await fetch(`${admin}/reload`, { method: 'POST' })).status,
        401,
        'reload needs the token',
      );

      // The CLI takes the token from the environment only.
      const withToken = await runCli(['status'], space.dir, { ...env, JMS_GATEWAY_ADMIN_URL: admin });
      assert.equal(withToken.code, 0, withToken.stderr);
      assert.match(withToken.stdout, /route\s+connected/);
      const without = await runCli(['status'], space.dir, {
        JMS_GATEWAY_ADMIN_URL: admin,
        JMS_GATEWAY_ADMIN_TOKEN: '',
      });
      assert.equal(without.code, 1);
      assert.match(without.stderr, /failed with 401: .*\(set JMS_GATEWAY_ADMIN_TOKEN\)/);

      const stopped = await running.stop('SIGTERM');
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.match(stopped.stdout, /"authenticated":true/);
      assert.ok(!stopped.stdout.includes(token), 'the token is not in the log');
      assert.ok(!stopped.stderr.includes(token), 'the token is not on stderr');
      assert.ok(!withToken.stdout.includes(token) && !withToken.stderr.includes(token));
    } finally {
      await killGateway(gateway);
      await space.cleanup();
    }
  },
);
