/**
 * `npm run bench [name ...]`: compiles the gateway and the benchmarks with tsc (into `dist/`, as
 * the image runs them), then runs every `bench/*.bench.ts` (or the named ones) one after the
 * other, each in its own process so one benchmark's heap and JIT state cannot skew the next.
 *
 * Compiled rather than through a TypeScript loader: the loader's output is not what users run
 * (it wraps every named function and class in a helper call, for one), and the benchmarks
 * measure what users run.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const compiled = join(root, 'dist', 'bench');
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.startsWith(name)))
  .sort();

const build = spawnSync(
  process.execPath,
  [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.bench.json')],
  { stdio: 'inherit' },
);
if (build.status !== 0) {
  console.error('the benchmarks did not compile (tsc -p tsconfig.bench.json)');
  process.exit(1);
}

let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file}`);
  const script = join(compiled, file.replace(/\.ts$/, '.js'));
  const result = spawnSync(process.execPath, ['--expose-gc', script], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
console.log(`\n${files.length - failed} benchmarks met their targets, ${failed} did not`);
process.exitCode = failed === 0 ? 0 : 1;
