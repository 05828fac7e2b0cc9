/**
 * Debian's chromium driven by playwright-core for the console's tests: headless, in a fresh
 * profile, with the flags that keep it off the network (no updates, sync or background fetches),
 * so a test sees only the gateway it started.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, type Page, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser page on a laptop-sized screen; `close` ends the browser and removes its profile. */
export interface ConsoleBrowser {
  page: Page;
  context: BrowserContext;
  close(): Promise<void>;
}

export async function openBrowser(): Promise<ConsoleBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'jms-gateway-chromium-'));
  let context: BrowserContext | undefined;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1366, height: 800 },
      locale: 'en-GB',
      timezoneId: 'UTC',
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const opened = context;
    return {
      page,
      context,
      async close() {
        await opened.close();
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await context?.close();
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
}
