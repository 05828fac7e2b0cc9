/**
 * Helpers shared by the benchmarks. A benchmark is a script `bench/<name>.bench.ts` that measures
 * its subject and its baseline in the same run, prints a table for people and one JSON line for
 * tools (`BENCH {...}`), and exits non-zero when a target is missed.
 */
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/** One measured row: what ran, how many operations, how long. */
export interface BenchRow {
  name: string;
  ops: number;
  ms: number;
  /** Operations per second. */
  rate: number;
  [extra: string]: string | number | boolean;
}

/** Runs `fn` (sync or async) once and returns its operations per second. */
export async function measure(name: string, ops: number, fn: () => unknown): Promise<BenchRow> {
  const start = performance.now();
  await fn();
  const ms = performance.now() - start;
  return { name, ops, ms: round(ms), rate: Math.round((ops / ms) * 1000) };
}

/**
 * Measures `runs` times after one warm-up and keeps the best run: on a shared 2-core machine the
 * best run is the least disturbed one, for subject and baseline alike.
 */
export async function best(name: string, ops: number, fn: () => unknown, runs = 3): Promise<BenchRow> {
  await fn();
  let top: BenchRow | undefined;
  for (let i = 0; i < runs; i++) {
    const row = await measure(name, ops, fn);
    if (!top || row.rate > top.rate) top = row;
  }
  return top!;
}

/**
 * Node arguments that run the script `name` beside the calling one (`import.meta.url`) the way
 * the caller runs: compiled (`npm run bench`), or from source through tsx when the caller was.
 */
export function siblingScript(callerUrl: string, name: string): string[] {
  const caller = fileURLToPath(callerUrl);
  const fromSource = caller.endsWith('.ts');
  const script = join(dirname(caller), `${name}${fromSource ? '.ts' : '.js'}`);
  return fromSource ? ['--import', 'tsx', script] : [script];
}

/** Prints rows as an aligned table. */
export function printTable(title: string, rows: readonly Record<string, unknown>[]): void {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cells = rows.map((row) => columns.map((column) => format(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
  console.log(`\n${title}`);
  console.log(columns.map((column, i) => column.padEnd(widths[i]!)).join('  '));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const line of cells) console.log(line.map((cell, i) => cell.padStart(widths[i]!)).join('  '));
}

/** Prints the machine-readable result line. */
export function printJson(benchmark: string, result: Record<string, unknown>): void {
  console.log(
    `BENCH ${JSON.stringify({ benchmark, ...result }, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))}`,
  );
}

/** A target check: prints PASS/FAIL and remembers failures for the exit code. */
export function target(description: string, ok: boolean): boolean {
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${description}`);
  if (!ok) process.exitCode = 1;
  return ok;
}

function format(value: unknown): string {
  if (typeof value === 'number')
    return Number.isInteger(value) ? value.toLocaleString('en-US') : value.toFixed(2);
  if (value === undefined || value === null) return '';
  return typeof value === 'string'
    ? value
    : JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
