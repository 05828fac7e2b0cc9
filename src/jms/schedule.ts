/**
 * The cron-like delivery schedule of a destination's TimeToDeliverOverride (DLV-5, DLV-6), after
 * WebLogic's `Schedule` helper (`weblogic.jms.extensions.Schedule`); docs/delivery.md describes
 * it for users.
 *
 * A schedule is seven whitespace-separated fields,
 * `millisecond second minute hour dayOfMonth month dayOfWeek`, each `*`, a value, a range `a-b`,
 * or a comma list of values and ranges. Semantics (all as WebLogic documents its scheduled
 * time-to-deliver override):
 * - `l` / `last` (any case) is the greatest value of its field, and may be used wherever a number
 *   may, including in ranges (`30-last`).
 * - dayOfWeek 1 is Sunday, 7 Saturday; months are 1-12 (not Java's 0-11).
 * - A dayOfMonth beyond the end of a month means the month's last day: 31 is the last day of every
 *   month, and 29, 30 or 31 in February mean the 28th, or the 29th in a leap year.
 * - Milliseconds are rounded down to a 50th of a second; WebLogic lists the values as
 *   0, 19, 39, ..., 979, 999, and "0-40 gets rounded to 0-39 and 50-999 gets rounded to 39-999",
 *   so a value rounds down to the greatest of those at or below it ({@link roundMillisecond}).
 * - Several schedules separated by `;` fire at the soonest of their times.
 * - The next scheduled time is strictly AFTER the given time (WebLogic's API is "the next
 *   scheduled time after the given time"), so a time that matches exactly yields the next one.
 *
 * Decisions where WebLogic's documentation is silent:
 * - All seven fields must match (dayOfMonth AND dayOfWeek), unlike Vixie cron's OR: WebLogic
 *   defines each field as a constraint and offers `;` for alternatives (its own use case for `;`
 *   is a schedule that depends on the day of the week). `* * * * 8-14 * 2` is the second Monday.
 * - A range must not run backwards (`17-9` is a syntax error): WebLogic writes "9 A.M. to
 *   5 P.M. and midnight" as the list `9-17,0`, never as a wrapping range, and guessing a wrap
 *   would silently schedule something else than the administrator meant.
 * - Fields are separated by any run of whitespace; no whitespace is allowed inside a field (it
 *   would be ambiguous with the field separator), and whitespace around `;` is ignored.
 * - Times are wall-clock times (WebLogic's Calendar uses the default time zone), in the
 *   process's local time zone by default or in UTC with `{ timeZone: 'utc' }`. In local time a
 *   wall-clock time skipped by a daylight-saving gap never happens, so it never matches; a time
 *   repeated by a fall-back overlap matches at both instants. Time zone transitions are assumed
 *   to be at least a day apart.
 * - Time is always passed in (epoch milliseconds, fractions dropped): the engine injects its clock.
 */
import { InvalidArgumentError, JMSError } from './errors.js';

/** Where wall-clock fields are read: the process's time zone (`TZ`) or UTC. */
export type ScheduleTimeZone = 'local' | 'utc';

/** How a schedule is evaluated. */
export interface ScheduleOptions {
  /** Time zone of the wall-clock fields; defaults to `'local'`, like WebLogic's Calendar. */
  readonly timeZone?: ScheduleTimeZone;
}

/** A parsed schedule (one or more `;`-separated seven-field schedules). */
export interface Schedule {
  /** The schedule text as given. */
  readonly text: string;
  /** The time zone its wall-clock fields are read in. */
  readonly timeZone: ScheduleTimeZone;
  /**
   * The first scheduled time strictly after `afterMs` (epoch ms), or `Infinity` when there is
   * none before the end of the JavaScript date range.
   */
  nextScheduledTime(afterMs: number): number;
}

/** A schedule text that does not follow the syntax of DLV-6. */
export class ScheduleSyntaxError extends JMSError {
  /** 1-based column of the schedule text where the problem was found. */
  readonly column: number;
  /** The schedule text that was rejected. */
  readonly schedule: string;

  constructor(schedule: string, column: number, problem: string) {
    super(`invalid schedule at column ${column}: ${problem}`);
    this.schedule = schedule;
    this.column = column;
  }
}

/**
 * Parses a schedule once so that its next times can be computed cheaply.
 * @throws {ScheduleSyntaxError} when the text is not a valid schedule.
 */
export function parseSchedule(text: string, options: ScheduleOptions = {}): Schedule {
  const timeZone = options.timeZone ?? 'local';
  const parts = splitSchedules(text).map((part) => compileSchedule(text, part));
  const zone = timeZone === 'utc' ? UTC_ZONE : LOCAL_ZONE;
  return {
    text,
    timeZone,
    nextScheduledTime: (afterMs) => soonest(parts, zone, checkedTime(afterMs)),
  };
}

/**
 * The next scheduled time after `afterMs`, in absolute epoch milliseconds (WebLogic's
 * `nextScheduledTimeInMillis`).
 * @throws {ScheduleSyntaxError} when the text is not a valid schedule.
 */
export function nextScheduledTime(schedule: string, afterMs: number, options: ScheduleOptions = {}): number {
  return parseSchedule(schedule, options).nextScheduledTime(afterMs);
}

/**
 * The next scheduled time after `nowMs`, in milliseconds from `nowMs` (WebLogic's
 * `nextScheduledTimeInMillisRelative`); always positive, `Infinity` when there is none.
 * @throws {ScheduleSyntaxError} when the text is not a valid schedule.
 */
export function nextScheduledTimeRelative(
  schedule: string,
  nowMs: number,
  options: ScheduleOptions = {},
): number {
  return nextScheduledTime(schedule, nowMs, options) - nowMs;
}

/**
 * Rounds a millisecond value down to the greatest of 0, 19, 39, ..., 979, 999 at or below it: the
 * WebLogic's "rounded down to the nearest 50th of a second".
 */
export function roundMillisecond(value: number): number {
  return value < 19 ? 0 : Math.floor((value + 1) / 20) * 20 - 1;
}

// ---------------------------------------------------------------------------------------------
// Parsing

type FieldName = 'millisecond' | 'second' | 'minute' | 'hour' | 'dayOfMonth' | 'month' | 'dayOfWeek';

interface FieldSpec {
  readonly name: FieldName;
  readonly min: number;
  readonly max: number;
}

const FIELD_SPECS: readonly FieldSpec[] = [
  { name: 'millisecond', min: 0, max: 999 },
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'dayOfMonth', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'dayOfWeek', min: 1, max: 7 },
];

const FIELD_LIST = FIELD_SPECS.map((spec) => spec.name).join(' ');

/** Membership by value: `set[v] === true` when v matches. */
type ValueSet = readonly boolean[];

/** One seven-field schedule, ready for matching. */
interface CompiledSchedule {
  readonly millisecond: ValueSet;
  readonly second: ValueSet;
  readonly minute: ValueSet;
  readonly hour: ValueSet;
  readonly dayOfMonth: ValueSet;
  readonly month: ValueSet;
  readonly dayOfWeek: ValueSet;
  /** The greatest dayOfMonth value: above a month's length it selects the month's last day. */
  readonly greatestDayOfMonth: number;
  readonly firstMonth: number;
  /** The earliest matching time of a day, where a walk entering a new day starts. */
  readonly firstTime: TimeOfDay;
}

/** A piece of the schedule text and where it starts (0-based offset in the whole text). */
interface Piece {
  readonly text: string;
  readonly offset: number;
}

function splitSchedules(text: string): Piece[] {
  const pieces: Piece[] = [];
  let offset = 0;
  for (const part of text.split(';')) {
    pieces.push({ text: part, offset });
    offset += part.length + 1;
  }
  return pieces;
}

function splitFields(part: Piece): Piece[] {
  return [...part.text.matchAll(/\S+/g)].map((match) => ({
    text: match[0],
    offset: part.offset + match.index,
  }));
}

function compileSchedule(text: string, part: Piece): CompiledSchedule {
  const fields = splitFields(part);
  // Field contents are checked before the field count so that the leftmost problem is reported.
  const sets: Partial<Record<FieldName, ValueSet>> = {};
  FIELD_SPECS.forEach((spec, i) => {
    const field = fields[i];
    if (field !== undefined) sets[spec.name] = parseField(text, field, spec);
  });
  checkFieldCount(text, part, fields);
  // Complete now that the count is checked.
  const complete = sets as Record<FieldName, ValueSet>;
  return {
    ...complete,
    greatestDayOfMonth: complete.dayOfMonth.lastIndexOf(true),
    firstMonth: firstValue(complete.month),
    firstTime: {
      hour: firstValue(complete.hour),
      minute: firstValue(complete.minute),
      second: firstValue(complete.second),
      millisecond: firstValue(complete.millisecond),
    },
  };
}

function checkFieldCount(text: string, part: Piece, fields: readonly Piece[]): void {
  const expected = FIELD_SPECS.length;
  const extra = fields[expected];
  if (extra !== undefined) {
    throw new ScheduleSyntaxError(
      text,
      extra.offset + 1,
      `unexpected text after field 'dayOfWeek' (expected ${expected} fields: ${FIELD_LIST})`,
    );
  }
  if (fields.length < expected) {
    const last = fields.at(-1);
    const column = last === undefined ? part.offset + 1 : last.offset + last.text.length + 1;
    const missing = FIELD_SPECS[fields.length]?.name ?? 'dayOfWeek';
    throw new ScheduleSyntaxError(
      text,
      column,
      `missing field '${missing}' (expected ${expected} fields: ${FIELD_LIST})`,
    );
  }
}

/** Parses `*` or a comma list of values and ranges into the set of matching values. */
function parseField(text: string, field: Piece, spec: FieldSpec): ValueSet {
  const set = new Array<boolean>(spec.max + 1).fill(false);
  if (field.text === '*') {
    addRange(set, spec, spec.min, spec.max);
    return set;
  }
  const fail = (index: number, problem: string, hint = ''): never => {
    throw new ScheduleSyntaxError(
      text,
      field.offset + index + 1,
      `${problem} in field '${spec.name}'${hint}`,
    );
  };
  let index = 0;
  for (;;) {
    const low = readValue(field.text, index);
    if (low.text === '*') fail(index, "'*' must stand alone");
    const from = valueOf(low.text, spec) ?? fail(index, "expected a number, a range, '*' or 'last'");
    checkRange(from, spec, low.text, index, fail);
    index = low.end;
    let to = from;
    if (field.text[index] === '-') {
      const high = readValue(field.text, index + 1);
      to = valueOf(high.text, spec) ?? fail(index + 1, "expected a number or 'last' after '-'");
      checkRange(to, spec, high.text, index + 1, fail);
      if (to < from) {
        const range = field.text.slice(low.start, high.end);
        fail(
          low.start,
          `range '${range}' runs backwards`,
          `; write '${wrapped(spec, from, to)}' to wrap around`,
        );
      }
      index = high.end;
    }
    addRange(set, spec, from, to);
    if (index === field.text.length) return set;
    if (field.text[index] !== ',') fail(index, "expected ',' after a value or range");
    index += 1;
  }
}

/** The run of characters from `start` up to the next `,` or `-`. */
function readValue(field: string, start: number): { text: string; start: number; end: number } {
  let end = start;
  while (end < field.length && field[end] !== ',' && field[end] !== '-') end += 1;
  return { text: field.slice(start, end), start, end };
}

/** A number or `l`/`last`; undefined when the text is neither. */
function valueOf(token: string, spec: FieldSpec): number | undefined {
  if (/^\d+$/.test(token)) return Number(token);
  if (/^(l|last)$/i.test(token)) return spec.max;
  return undefined;
}

function checkRange(
  value: number,
  spec: FieldSpec,
  token: string,
  index: number,
  fail: (index: number, problem: string) => never,
): void {
  if (value < spec.min || value > spec.max) {
    fail(index, `${token} is out of range (${spec.min}-${spec.max})`);
  }
}

/** The list a backwards range was probably meant as. */
function wrapped(spec: FieldSpec, from: number, to: number): string {
  return `${from}-${spec.max},${spec.min}-${to}`;
}

function addRange(set: boolean[], spec: FieldSpec, from: number, to: number): void {
  // Milliseconds only ever fire on the rounded values, so they are stored rounded.
  const round = spec.name === 'millisecond' ? roundMillisecond : (value: number) => value;
  for (let value = from; value <= to; value += 1) set[round(value)] = true;
}

// ---------------------------------------------------------------------------------------------
// Computing the next time

const DAY_MS = 86_400_000;
/** The Gregorian calendar repeats every 400 years (146,097 days, a whole number of weeks). */
const CALENDAR_CYCLE_MS = 146_097 * DAY_MS;
/** The greatest absolute value of a JavaScript date (ECMA-262 TimeClip). */
const MAX_TIME_MS = 8.64e15;

/** The offset of wall-clock time from UTC at each instant. */
interface Zone {
  offsetAt(epochMs: number): number;
  /** Longest jump that can be made without missing a pair of transitions between its ends. */
  readonly maxStepMs: number;
}

const UTC_ZONE: Zone = { offsetAt: () => 0, maxStepMs: Infinity };

const LOCAL_ZONE: Zone = {
  // Rounded because historical local mean time offsets may carry fractions of a minute.
  offsetAt: (epochMs) => Math.round(-new Date(epochMs).getTimezoneOffset() * 60_000),
  maxStepMs: DAY_MS,
};

function checkedTime(afterMs: number): number {
  if (!Number.isFinite(afterMs) || Math.abs(afterMs) > MAX_TIME_MS) {
    throw new InvalidArgumentError(`schedule time ${afterMs} is not a valid epoch time in milliseconds`);
  }
  return Math.floor(afterMs);
}

function soonest(parts: readonly CompiledSchedule[], zone: Zone, afterMs: number): number {
  return Math.min(...parts.map((part) => nextTime(part, zone, afterMs)));
}

/**
 * Walks forward from just after `afterMs`: while the wall-clock time at the current instant does
 * not match, jumps to the earliest wall-clock time that could match given the first mismatching
 * field (next matching month, day, hour, ...), so the walk takes a few steps per calendar unit
 * and never steps millisecond by millisecond.
 */
function nextTime(schedule: CompiledSchedule, zone: Zone, afterMs: number): number {
  // A match is certain within one calendar cycle; the bound only guards against a bug looping.
  const limit = Math.min(afterMs + CALENDAR_CYCLE_MS, MAX_TIME_MS - DAY_MS);
  let epochMs = afterMs + 1;
  while (epochMs <= limit) {
    const offset = zone.offsetAt(epochMs);
    const target = nextCandidate(schedule, toWall(epochMs + offset));
    if (target === undefined) return epochMs;
    epochMs = advance(zone, epochMs, offset, target - offset);
  }
  return Infinity;
}

/**
 * Moves to `candidateMs`, computed with the offset at `epochMs`. When the offset changes on the
 * way, stops at the transition instead: up to it the computation was right, after it the wall
 * clock is different and must be read again.
 */
function advance(zone: Zone, epochMs: number, offset: number, candidateMs: number): number {
  const next = Math.min(candidateMs, epochMs + zone.maxStepMs);
  return zone.offsetAt(next) === offset ? next : firstOffsetChange(zone, epochMs, next, offset);
}

/** The first instant in (low, high] whose offset differs from `offset` (binary search). */
function firstOffsetChange(zone: Zone, low: number, high: number, offset: number): number {
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (zone.offsetAt(middle) === offset) low = middle;
    else high = middle;
  }
  return high;
}

/** Wall-clock fields of an instant, dayOfWeek 1 = Sunday and month 1-12 as in the schedule. */
interface Wall {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millisecond: number;
  readonly dayOfWeek: number;
}

/** Wall-clock fields of a wall time expressed as if it were UTC epoch milliseconds. */
function toWall(wallMs: number): Wall {
  const date = new Date(wallMs);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    millisecond: date.getUTCMilliseconds(),
    dayOfWeek: date.getUTCDay() + 1,
  };
}

/** Wall time (as UTC epoch ms) of the given fields; out-of-range fields carry over. */
function wallTime(year: number, month: number, day: number, time: TimeOfDay): number {
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(time.hour, time.minute, time.second, time.millisecond);
  return date.getTime();
}

interface TimeOfDay {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millisecond: number;
}

/**
 * The earliest wall time after `wall` that could match, or undefined when `wall` matches. The
 * fields are checked from the largest down; below the mismatching one, the lower fields start at
 * their first matching values, since nothing earlier in that unit can match.
 */
function nextCandidate(s: CompiledSchedule, wall: Wall): number | undefined {
  const { year, month, day, hour, minute, second, millisecond } = wall;
  const first = s.firstTime;
  if (s.month[month] !== true) {
    const next = nextValue(s.month, month + 1);
    return next === undefined ? wallTime(year + 1, s.firstMonth, 1, first) : wallTime(year, next, 1, first);
  }
  if (!dayMatches(s, year, month, day, wall.dayOfWeek)) {
    return wallTime(year, month, nextMatchingDay(s, wall), first);
  }
  if (s.hour[hour] !== true) {
    const next = nextValue(s.hour, hour + 1);
    return next === undefined
      ? wallTime(year, month, day + 1, first)
      : wallTime(year, month, day, { ...first, hour: next });
  }
  if (s.minute[minute] !== true) {
    const next = nextValue(s.minute, minute + 1);
    return next === undefined
      ? wallTime(year, month, day, { ...first, hour: hour + 1 })
      : wallTime(year, month, day, { ...first, hour, minute: next });
  }
  if (s.second[second] !== true) {
    const next = nextValue(s.second, second + 1);
    return next === undefined
      ? wallTime(year, month, day, { ...first, hour, minute: minute + 1 })
      : wallTime(year, month, day, { hour, minute, second: next, millisecond: first.millisecond });
  }
  if (s.millisecond[millisecond] !== true) {
    const next = nextValue(s.millisecond, millisecond + 1);
    return next === undefined
      ? wallTime(year, month, day, { hour, minute, second: second + 1, millisecond: first.millisecond })
      : wallTime(year, month, day, { hour, minute, second, millisecond: next });
  }
  return undefined;
}

/** The next matching day of the month after `wall`'s, or the month's length + 1 (next month). */
function nextMatchingDay(s: CompiledSchedule, wall: Wall): number {
  const length = daysInMonth(wall.year, wall.month);
  for (let day = wall.day + 1; day <= length; day += 1) {
    const dayOfWeek = ((wall.dayOfWeek - 1 + day - wall.day) % 7) + 1;
    if (dayMatches(s, wall.year, wall.month, day, dayOfWeek)) return day;
  }
  return length + 1;
}

/** dayOfMonth AND dayOfWeek; a dayOfMonth beyond the month's end selects its last day. */
function dayMatches(
  s: CompiledSchedule,
  year: number,
  month: number,
  day: number,
  dayOfWeek: number,
): boolean {
  if (s.dayOfWeek[dayOfWeek] !== true) return false;
  if (s.dayOfMonth[day] === true) return true;
  const length = daysInMonth(year, month);
  return day === length && s.greatestDayOfMonth > length;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** The smallest matching value at or above `from`, or undefined. */
function nextValue(set: ValueSet, from: number): number | undefined {
  for (let value = from; value < set.length; value += 1) {
    if (set[value] === true) return value;
  }
  return undefined;
}

/** The smallest matching value; every parsed field has at least one. */
function firstValue(set: ValueSet): number {
  return set.indexOf(true);
}
