import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { buildConsole } from '../../console/build.js';
import { CHROMIUM, openBrowser } from './console-browser.js';
import { adminJson, eventually, repositoryRoot, withGateway } from './gateway-harness.js';

/**
 * queue://orders allows no redelivery and parks into queue://orders.errors. The bridge `deliver`
 * takes orders to queue://full, which holds one message and is full, so the orders it reads wait
 * in flight; restarting it gives them back and the engine parks them (as in the replay test).
 * The bridge `broken` reads queue://gone: deleting that queue makes it fail, creating it again
 * lets a restart recover it. `moving` carries traffic from queue://in to queue://out.
 */
const DESTINATIONS = [
  'store: { path: ./data }',
  'engine: { autoCreateDestinations: false }',
  'destinations:',
  '  queues:',
  '    - { name: orders, redeliveryLimit: 0, errorDestination: queue://orders.errors }',
  '    - { name: orders.errors }',
  '    - { name: full, messagesMaximum: 1 }',
  '    - { name: in }',
  '    - { name: out }',
  '    - { name: gone }',
  '    - { name: big }',
  'bridges:',
  '  - name: moving',
  '    source: { type: jms, destination: queue://in }',
  '    target: { type: jms, destination: queue://out }',
  '  - name: broken',
  '    source: { type: jms, destination: queue://gone }',
  '    target: { type: jms, destination: queue://out }',
];
const DELIVER = [
  '  - name: deliver',
  '    source: { type: jms, destination: queue://orders }',
  '    target: { type: jms, destination: queue://full, sendTimeoutMs: 100 }',
  '    stopTimeoutMs: 200',
];
const CONFIG = [...DESTINATIONS, ...DELIVER, ''].join('\n');
const WITHOUT_DELIVER = [...DESTINATIONS, ''].join('\n');

const ORDERS = [1, 2, 3].map((n) => ({
  type: 'text',
  headers: { JMSType: 'order', JMSPriority: 6 },
  properties: { region: n === 2 ? 'us' : 'eu', amount: { type: 'long', value: String(100 * n) } },
  body: `<order id="${n}"><line sku="A-${n}" qty="${n}"/></order>`,
}));

/** Screenshots for the README and docs/console.md, when CONSOLE_SCREENSHOTS=1. */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  const dir = join(repositoryRoot, 'docs/images');
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `console-${name}.png`), fullPage: true });
}

/** The page's notice (errors and what an action did), once it holds `text`. */
async function notice(page: Page, text: string | RegExp): Promise<string> {
  const locator = page.locator('#notice p').filter({ hasText: text });
  await locator.waitFor();
  return locator.innerText();
}

/** Answers the confirmation dialog with OK, returning its question. */
async function confirm(page: Page): Promise<string> {
  const dialog = page.locator('dialog#confirm[open]');
  await dialog.waitFor();
  const question = await dialog.locator('#confirm-text').innerText();
  await dialog.locator('#confirm-ok').click();
  await page.locator('dialog#confirm[open]').waitFor({ state: 'hidden' });
  return question;
}

test(
  'console - an operator signs in, sees a bridge fail and recover, browses and replays parked orders, tests a selector',
  {
    timeout: 180_000,
    skip: existsSync(CHROMIUM) ? false : `no chromium at ${CHROMIUM}: apt-get install -y chromium`,
  },
  async () => {
    await buildConsole();
    const token = randomBytes(24).toString('hex');
    await withGateway(
      { files: { 'gateway.yaml': CONFIG }, env: { JMS_GATEWAY_ADMIN_TOKEN: token } },
      async (running, space) => {
        const admin = running.admin;
        const call = <T>(method: string, path: string, body?: unknown) =>
          adminJson<T>(admin, path, {
            method,
            headers: { authorization: `Bearer ${token}` },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
        const browser = await openBrowser();
        try {
          const { page } = browser;
          const pageErrors: string[] = [];
          page.on('pageerror', (error) => pageErrors.push(error.message));
          const offGateway: string[] = [];
          page.on('request', (request) => {
            if (!request.url().startsWith(admin) && !request.url().startsWith('blob:'))
              offGateway.push(request.url());
          });

          // Sign in: a wrong token first.
          await page.goto(`${admin}/console`);
          await page.locator('#token').fill(`${token}x`);
          await page.locator('#token').press('Enter');
          assert.match(await notice(page, 'did not accept'), /JMS_GATEWAY_ADMIN_TOKEN/);
          await screenshot(page, 'login');
          await page.locator('#token').fill(token);
          await page.locator('#token').press('Enter');
          await page.locator('table.bridges').waitFor();
          assert.equal(
            await page.evaluate('document.cookie'),
            '',
            'no cookie: the token is sent as a header',
          );

          // Traffic through `moving` after the first poll: its chart shows the rate.
          for (let i = 0; i < 20; i++)
            await call('POST', '/destinations/queue/in/messages', { type: 'text', body: `m-${i}` });
          await page
            .locator('table.bridges tr', { hasText: 'moving' })
            .locator('svg.chart:not([aria-label$="peak 0.0/s"])')
            .waitFor();
          await call('POST', '/destinations/queue/full/messages', { type: 'text', body: 'blocker' });
          for (const order of ORDERS) await call('POST', '/destinations/queue/orders/messages', order);
          await eventually(async () => {
            const bridges = await call<{ name: string; counters: { in: number } }[]>('GET', '/bridges');
            return bridges.find((b) => b.name === 'deliver')!.counters.in >= 3 ? true : undefined;
          }, 'deliver to have read the orders');
          await page.getByRole('button', { name: 'restart deliver' }).click();
          assert.match(await confirm(page), /Restart bridge 'deliver'/);
          const parkedRow = page.locator('table.destinations tr', { hasText: 'queue://orders.errors' });
          await parkedRow.locator('.badge', { hasText: 'parked messages' }).waitFor();
          assert.equal(await parkedRow.locator('td').nth(1).innerText(), '3');

          // A bridge fails (its source is deleted) and recovers (it comes back, the bridge restarts).
          await call('DELETE', '/destinations/queue/gone');
          await page.getByRole('button', { name: 'restart broken' }).click();
          await confirm(page);
          const broken = page.locator('table.bridges tr', { hasText: 'broken' });
          await broken.locator('[data-bridge-status="failed"]').waitFor();
          assert.match(await broken.locator('.reason').innerText(), /queue:\/\/gone/);
          await screenshot(page, 'overview');
          await call('POST', '/destinations', { kind: 'queue', name: 'gone' });
          await page.getByRole('button', { name: 'restart broken' }).click();
          await confirm(page);
          await broken.locator('[data-bridge-status="connected"]').waitFor();

          // Take the route out by a reload from the console, so replayed orders stay to be seen.
          await writeFile(space.path('gateway.yaml'), WITHOUT_DELIVER);
          await page.getByRole('link', { name: 'Reload' }).click();
          await page.getByRole('button', { name: 'Show what would change' }).click();
          const reloadResult = page.locator('#reload-result');
          await reloadResult.getByText('A reload would do this:').waitFor();
          assert.match(
            await reloadResult.innerText(),
            /Bridges to remove \(drained, then stopped\)\s+deliver/,
          );
          assert.equal((await call<unknown[]>('GET', '/bridges')).length, 3, 'the preview changed nothing');
          await screenshot(page, 'reload');
          await page.getByRole('button', { name: 'Apply…' }).click();
          assert.match(await confirm(page), /apply it now/);
          await reloadResult.getByText('The configuration was reloaded.').waitFor();
          assert.match(await reloadResult.innerText(), /Bridges removed\s+deliver/);

          // Browse the error destination, look at one order.
          await page.getByRole('link', { name: 'Overview' }).click();
          await parkedRow.getByRole('link', { name: 'queue://orders.errors' }).click();
          const rows = page.locator('table.messages tbody tr');
          await rows.first().waitFor();
          assert.equal(await rows.count(), 3);
          await page.locator('#browse-selector').fill("region = 'eu'");
          await page.locator('#browse-selector').press('Enter');
          await eventually(async () => ((await rows.count()) === 2 ? true : undefined), 'two eu orders');
          await rows.first().locator('button.link').click();
          const detail = page.locator('section.message');
          await detail.waitFor();
          const detailText = await detail.innerText();
          assert.match(detailText, /JMS_ErrorOrigin\s+string\s+queue:\/\/orders/);
          assert.match(detailText, /amount\s+long\s+100/);
          assert.match(detailText, /shown as XML/);
          assert.match(
            await detail.locator('pre.body').innerText(),
            /^<order id="1">\n {2}<line sku="A-1" qty="1"\/>\n<\/order>$/,
          );
          await screenshot(page, 'destination');

          // A replay to a deleted origin says why, and loses nothing.
          await page.locator('#browse-selector').fill('');
          await call('DELETE', '/destinations/queue/orders');
          await page.getByRole('button', { name: 'Replay to origin…' }).click();
          assert.match(
            await confirm(page),
            /Replay 3 messages from queue:\/\/orders\.errors to their origins\?/,
          );
          assert.match(await notice(page, 'Replay failed'), /queue:\/\/orders' no longer exists/);
          assert.equal(
            (await call<unknown[]>('GET', '/destinations/queue/orders.errors/messages')).length,
            3,
          );

          // With the origin back, the replay moves them and they arrive.
          await call('POST', '/destinations', { kind: 'queue', name: 'orders' });
          await page.getByRole('button', { name: 'Replay to origin…' }).click();
          assert.match(await confirm(page), /Replay 3 messages/);
          await notice(page, 'Replayed 3 messages to their origins.');
          await page.getByText('No available messages match.').waitFor();
          await page.goto(`${admin}/console#/destination/queue/orders`);
          await rows.first().waitFor();
          assert.equal(await rows.count(), 3);
          assert.equal(await page.locator('table.messages').getByText('redelivery limit').count(), 0);

          // Try a selector on a browsed message; a bad selector shows the caret.
          await rows.first().locator('button.link').click();
          await page.getByRole('button', { name: 'Try a selector on it' }).click();
          const selector = page.locator('#selector-text');
          await selector.fill("region = 'eu' AND amount >");
          await page.getByRole('button', { name: 'Check' }).click();
          const caret = page.locator('#selector-result pre.caret');
          await caret.waitFor();
          const lines = (await caret.innerText()).split('\n');
          assert.equal(lines[0], "  region = 'eu' AND amount >");
          assert.equal(lines[1], `${' '.repeat(2 + "region = 'eu' AND amount >".length)}^`);
          await screenshot(page, 'selector-error');
          await selector.fill("region = 'eu' AND amount > 50 AND color = 'red'");
          await page.getByRole('button', { name: 'Evaluate against the message' }).click();
          const result = page.locator('#selector-result');
          await result.locator('ul.tree').waitFor();
          const tree = await result.innerText();
          assert.match(tree, /UNKNOWN: the message is not selected/);
          assert.match(tree, /color ⇒ NULL \(no such property\)/);
          assert.match(tree, /amount ⇒ 100 \(long property\)/);
          await screenshot(page, 'selector');

          // A huge body is cut for display, its size said, the rest downloadable.
          await call('POST', '/destinations/queue/big/messages', { type: 'text', body: 'x'.repeat(300_000) });
          await page.goto(`${admin}/console#/destination/queue/big`);
          await rows.first().locator('button.link').click();
          const warning = page.locator('section.message .warning');
          await warning.waitFor();
          assert.match(await warning.innerText(), /300,000 characters: only its beginning is shown/);
          const download = page.waitForEvent('download');
          await warning.getByRole('link', { name: 'Download the whole body' }).click();
          const saved = join(space.dir, 'body.txt');
          await (await download).saveAs(saved);
          assert.equal((await readFile(saved, 'utf8')).length, 300_000);

          assert.deepEqual(pageErrors, [], 'no script errors in the page');
          assert.deepEqual(offGateway, [], 'nothing fetched from anywhere but the gateway');
        } finally {
          await browser.close();
        }
      },
    );
  },
);
