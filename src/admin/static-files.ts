/**
 * Static files the admin server serves from a folder of the package, such as the web console's
 * built page under `/console/`. They are served without a token: they hold no data, and the
 * page asks for the token and sends it as a bearer header with each API call (no cookies, so
 * no cross-site request forgery). `index.html` answers the folder itself; `/console` redirects
 * to `/console/` so the page's relative links resolve.
 */
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

export interface StaticFiles {
  /** The URL path, e.g. `/console`. Served without a token: see OPEN_PATHS in server.ts. */
  readonly prefix: string;
  /** The folder, an absolute path (e.g. `fileURLToPath(new URL('../../console', import.meta.url))`). */
  readonly root: string;
}

export async function mountStaticFiles(app: FastifyInstance, files: StaticFiles): Promise<void> {
  const prefix = files.prefix.replace(/\/+$/, '');
  await app.register(fastifyStatic, {
    root: files.root,
    prefix: `${prefix}/`,
    index: 'index.html',
    // Only what is in the folder: no listing, no dotfiles, nothing above the root.
    list: false,
    dotfiles: 'deny',
    decorateReply: false,
    // Not API operations: they stay out of the OpenAPI document.
    schemaHide: true,
  });
  app.get(prefix, { schema: { hide: true } }, (_request, reply) => reply.redirect(`${prefix}/`));
}
