/**
 * One restart, alone in its process so its peak memory is its own: `FileStore.open` and
 * `JmsEngine.open` on the store in argv[2], which must hold argv[3] messages on `queue://restart`.
 * Prints one JSON line. Started by store.bench.ts; not a benchmark of its own.
 */
import { performance } from 'node:perf_hooks';
import { JmsEngine } from '../src/index.js';
import { FileStore } from '../src/store/file-store.js';

const [dir, expected] = [process.argv[2]!, Number(process.argv[3])];
const gc = (globalThis as { gc?: () => void }).gc!;
gc();
const heapBefore = process.memoryUsage().heapUsed;
const started = performance.now();
const store = await FileStore.open({ path: dir });
const opened = performance.now();
const engine = await JmsEngine.open({ store });
const recovered = performance.now();
const held = engine.destinationStatistics('queue://restart').messagesCurrent;
if (held !== expected) throw new Error(`recovered ${held} messages, expected ${expected}`);
gc();
const heapPerMessage = Math.round((process.memoryUsage().heapUsed - heapBefore) / expected);
await engine.close();
console.log(
  JSON.stringify({
    openMs: Math.round(opened - started),
    recoverMs: Math.round(recovered - opened),
    restartMs: Math.round(recovered - started),
    heapPerMessage,
    // resourceUsage reports the highest resident set size of this process's life, in KiB.
    peakRssMB: Math.round((process.resourceUsage().maxRSS * 1024) / 1e6),
  }),
);
