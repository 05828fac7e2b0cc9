import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPostgresUrl, redactUrl, scrubSecrets } from '../../../src/store/postgres-url.js';

test('postgres url - the password and secret parameters are masked; user, host, port and database stay', () => {
  assert.equal(
    redactUrl('postgres://gw:s3cr%40t@db.internal:5432/jms'),
    'postgres://gw:***@db.internal:5432/jms',
  );
  assert.equal(
    redactUrl('postgresql://db:5432/jms?user=gw&password=pw-in-query&sslmode=require'),
    'postgresql://db:5432/jms?user=gw&password=***&sslmode=require',
  );
  assert.equal(redactUrl('postgres://gw@db/jms'), 'postgres://gw@db/jms');
  assert.equal(redactUrl('not a url with pw'), '(unparsable URL)');
});

test('postgres url - text that repeats the password, as written or decoded, is scrubbed', () => {
  const url = 'postgres://gw:s3cr%40t@db/jms';
  assert.equal(scrubSecrets('auth failed for s3cr@t and s3cr%40t', url), 'auth failed for *** and ***');
});

test('postgres url - a missing url, a non-URL or another scheme is refused before connecting, without the password', () => {
  assert.throws(() => checkPostgresUrl(undefined), /needs a url/);
  assert.throws(() => checkPostgresUrl('db:5432'), /must start with postgres:\/\//);
  assert.throws(
    () => checkPostgresUrl('mysql://gw:hidden-pw@db/jms'),
    (error: Error) =>
      /must start with postgres:\/\//.test(error.message) && !error.message.includes('hidden-pw'),
  );
  assert.equal(checkPostgresUrl('postgres://db/jms'), 'postgres://db/jms');
});
