/**
 * CPU accounting for benchmarks that run beside brokers on the same machine: how busy the whole
 * machine was during a run, and how much CPU one process (a gateway) spent. On a machine the
 * brokers and the pipe share, a run can be bound by the machine's CPU rather than by any one
 * wait; these figures say when it was. Read from Linux's /proc; elsewhere they are unknown.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** A reading to compare a later one with. */
export interface CpuMark {
  /** Busy and total clock ticks of all cores since boot, or undefined where /proc is missing. */
  readonly machine: { busy: number; total: number } | undefined;
  /** The process's user + system CPU in ms, per watched pid. */
  readonly processes: ReadonlyMap<number, number>;
}

/** What happened between two marks. */
export interface CpuSpent {
  /** Share of all cores that was busy, 0..1; undefined where unknown. */
  readonly machineBusy: number | undefined;
  /** CPU ms each watched process spent; a pid whose reading failed is missing. */
  readonly processMs: ReadonlyMap<number, number>;
}

/** Clock ticks per second of /proc's counters (USER_HZ): 100 on every Linux in use. */
const TICKS_PER_SECOND = 100;

function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const total = ticks.reduce((sum, value) => sum + value, 0);
    // idle and iowait: a core waiting for the disk is not computing.
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may hold spaces and parentheses: utime and stime
    // are the 14th and 15th fields of the line, the 12th and 13th after ") ".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Reads the machine's counters and those of the given processes. */
export function cpuMark(pids: readonly number[] = []): CpuMark {
  const processes = new Map<number, number>();
  for (const pid of pids) {
    const ms = processCpuMs(pid);
    if (ms !== undefined) processes.set(pid, ms);
  }
  return { machine: machineTicks(), processes };
}

/** What was spent from `start` until now, for the processes `start` watched. */
export function cpuSince(start: CpuMark): CpuSpent {
  const now = cpuMark([...start.processes.keys()]);
  const processMs = new Map<number, number>();
  for (const [pid, before] of start.processes) {
    const after = now.processes.get(pid);
    if (after !== undefined) processMs.set(pid, after - before);
  }
  let machineBusy: number | undefined;
  if (start.machine && now.machine && now.machine.total > start.machine.total) {
    machineBusy = (now.machine.busy - start.machine.busy) / (now.machine.total - start.machine.total);
  }
  return { machineBusy, processMs };
}

/** "172% of 200%": busy share of the machine as cores, for tables. */
export function formatMachineBusy(busy: number | undefined): string {
  if (busy === undefined) return '-';
  const cores = availableParallelism();
  return `${Math.round(busy * cores * 100)}% of ${cores * 100}%`;
}
