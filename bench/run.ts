/**
 * `npm run bench [name ...]`: runs every `bench/*.bench.ts` (or the named ones) one after the
 * other, each in its own process so one benchmark's heap and JIT state cannot skew the next.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.startsWith(name)))
  .sort();

let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', join(here, file)], {
    stdio: 'inherit',
  });
  if (result.status !== 0) failed++;
}
console.log(`\n${files.length - failed} benchmarks met their targets, ${failed} did not`);
process.exitCode = failed === 0 ? 0 : 1;
