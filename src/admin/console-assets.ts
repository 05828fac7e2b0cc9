/**
 * The web console's files, as `npm run build` leaves them in `dist/console/`: the admin server
 * serves them at `/console` without a token (they hold no data; the page asks for the token and
 * sends it with every API call). Only the files the build wrote are served, read once.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A console file and its media type. */
export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
}

/** Where the console's path starts on the admin server. */
export const CONSOLE_PATH = '/console';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Headers every console file is sent with: scripts and styles from the gateway alone (no CDN, no
 * inline script), API calls to the gateway alone, never framed by another site.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

// From src/admin (run with tsx) the build output is ../../dist/console; from dist/src/admin, ../../console.
const CANDIDATES = ['../../dist/console/', '../../console/'].map((relative) =>
  fileURLToPath(new URL(relative, import.meta.url)),
);

let assets: Map<string, ConsoleAsset> | undefined;

function load(): Map<string, ConsoleAsset> {
  const found = new Map<string, ConsoleAsset>();
  const dir = CANDIDATES.find((candidate) => existsSync(`${candidate}index.html`));
  if (dir === undefined) return found;
  for (const name of readdirSync(dir)) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType !== undefined) found.set(name, { body: readFileSync(`${dir}${name}`), contentType });
  }
  return found;
}

/**
 * The console file for a request path (`/console`, `/console/`, `/console/console.js`), or
 * undefined when the path is not the console's or names no built file. Without a build, the
 * console's pages answer with a page that says how to build it.
 */
export function consoleAsset(path: string): ConsoleAsset | undefined {
  if (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`)) return undefined;
  assets ??= load();
  const name = path.slice(CONSOLE_PATH.length + 1) || 'index.html';
  const asset = assets.get(name);
  if (asset !== undefined || name !== 'index.html') return asset;
  return {
    contentType: 'text/plain; charset=utf-8',
    body: Buffer.from('The web console is not built: run `npm run build` (it writes dist/console/).\n'),
  };
}
