import { readFile } from 'node:fs/promises';

/**
 * The package version, read at run time from the nearest `package.json` named `jms-gateway`
 * above this file: `src/cli` in the repository, `dist/src/cli` when built, and
 * `node_modules/jms-gateway/dist/src/cli` when installed from the registry or a packed tarball.
 */
export async function packageVersion(): Promise<string> {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(await readFile(new URL('package.json', dir), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'jms-gateway' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not here: look one folder up
    }
    if (dir.pathname === '/') return 'unknown';
  }
}
