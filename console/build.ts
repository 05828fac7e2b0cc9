/**
 * Builds the web console into dist/console/: the TypeScript bundled into one script by esbuild,
 * the page and the style sheet copied. `npm run build` (and so `prepare`) runs it, so a package,
 * a fresh clone and the container image all hold the console; nothing is fetched at run time.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Writes the console into `outDir` (default dist/console/ of the repository). */
export async function buildConsole(outDir = here('../dist/console/')): Promise<void> {
  await mkdir(outDir, { recursive: true });
  await build({
    entryPoints: [here('src/main.ts')],
    bundle: true,
    format: 'iife',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    outfile: `${outDir}/console.js`,
    logLevel: 'warning',
  });
  await copyFile(here('index.html'), `${outDir}/index.html`);
  await copyFile(here('console.css'), `${outDir}/console.css`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole();
