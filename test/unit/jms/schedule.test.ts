/**
 * The cron-like delivery schedule (DLV-6). Most tests evaluate in UTC so that they do not depend
 * on the machine's time zone; the local-time tests either compute their expectations with the
 * local Date API or set `TZ` for their duration.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidArgumentError, JMSError } from '../../../src/jms/errors.js';
import {
  nextScheduledTime,
  nextScheduledTimeRelative,
  parseSchedule,
  roundMillisecond,
  ScheduleSyntaxError,
} from '../../../src/jms/schedule.js';

/** Epoch ms of a UTC wall time, month 1-12. */
function utc(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

/** The next time of `text` after `after`, evaluated in UTC. */
function nextUtc(text: string, after: number): number {
  return nextScheduledTime(text, after, { timeZone: 'utc' });
}

/** The first `count` times of `text` after `after`, each one after the previous. */
function firings(text: string, after: number, count: number): number[] {
  const schedule = parseSchedule(text, { timeZone: 'utc' });
  const times: number[] = [];
  let time = after;
  for (let i = 0; i < count; i += 1) {
    time = schedule.nextScheduledTime(time);
    times.push(time);
  }
  return times;
}

/** Runs `body` with the process time zone set to `zone`, then restores it. */
function withTimeZone(zone: string, body: () => void): void {
  const saved = process.env.TZ;
  process.env.TZ = zone;
  try {
    body();
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
}

function syntaxError(text: string): ScheduleSyntaxError {
  try {
    parseSchedule(text);
  } catch (error) {
    assert.ok(error instanceof ScheduleSyntaxError, `expected a ScheduleSyntaxError for '${text}'`);
    return error;
  }
  assert.fail(`'${text}' was accepted`);
}

// --- WebLogic's documented examples ---------------------------------------------------------

test('schedule - quarter hours fire at :00, :15, :30, :45 (DLV-6)', () => {
  const text = '0 0 0,15,30,45 * * * *';
  assert.equal(nextUtc(text, utc(2024, 5, 6, 10, 7, 12, 345)), utc(2024, 5, 6, 10, 15));
  assert.deepEqual(firings(text, utc(2024, 5, 6, 10, 50), 5), [
    utc(2024, 5, 6, 11, 0),
    utc(2024, 5, 6, 11, 15),
    utc(2024, 5, 6, 11, 30),
    utc(2024, 5, 6, 11, 45),
    utc(2024, 5, 6, 12, 0),
  ]);
});

test('schedule - a time that matches exactly yields the next one, strictly after (DLV-6)', () => {
  assert.equal(nextUtc('0 0 0,15,30,45 * * * *', utc(2024, 5, 6, 10, 15)), utc(2024, 5, 6, 10, 30));
  assert.equal(nextUtc('0 0 0,15,30,45 * * * *', utc(2024, 5, 6, 10, 14, 59, 999)), utc(2024, 5, 6, 10, 15));
});

test('schedule - hour field 9-17,0 fires from 9 to 17 and at midnight (DLV-6)', () => {
  const text = '0 0 0 9-17,0 * * *';
  assert.equal(nextUtc(text, utc(2024, 5, 6, 3)), utc(2024, 5, 6, 9));
  assert.equal(nextUtc(text, utc(2024, 5, 6, 12, 30)), utc(2024, 5, 6, 13));
  assert.equal(nextUtc(text, utc(2024, 5, 6, 17)), utc(2024, 5, 7, 0));
  assert.equal(nextUtc(text, utc(2024, 5, 7, 0)), utc(2024, 5, 7, 9));
  assert.deepEqual(
    firings(text, utc(2024, 5, 6, 0), 10).map((time) => new Date(time).getUTCHours()),
    [9, 10, 11, 12, 13, 14, 15, 16, 17, 0],
  );
});

test('schedule - dayOfWeek 2-6 is Monday to Friday (DLV-6)', () => {
  // 2024-03-08 is a Friday.
  const text = '0 0 0 1 * * 2-6';
  assert.equal(nextUtc(text, utc(2024, 3, 8, 0, 30)), utc(2024, 3, 8, 1));
  assert.equal(nextUtc(text, utc(2024, 3, 8, 2)), utc(2024, 3, 11, 1));
  const days = firings(text, utc(2024, 3, 8, 2), 5).map((time) => new Date(time).getUTCDay());
  assert.deepEqual(days, [1, 2, 3, 4, 5]);
});

test('schedule - dayOfWeek 1 is Sunday and 7 Saturday (DLV-6)', () => {
  // 2024-03-11 is a Monday.
  assert.equal(nextUtc('0 0 0 0 * * 1', utc(2024, 3, 11)), utc(2024, 3, 17));
  assert.equal(nextUtc('0 0 0 0 * * 7', utc(2024, 3, 11)), utc(2024, 3, 16));
});

test("schedule - 'l' and 'last' in any case are the greatest value of the field (DLV-6)", () => {
  assert.equal(nextUtc('0 0 0 l * * *', utc(2024, 5, 6, 1)), utc(2024, 5, 6, 23));
  assert.equal(nextUtc('0 0 LAST 0 * * *', utc(2024, 5, 6, 1)), utc(2024, 5, 7, 0, 59));
  assert.equal(nextUtc('Last 0 0 0 * * *', utc(2024, 5, 6, 1)), utc(2024, 5, 7, 0, 0, 0, 999));
  assert.equal(nextUtc('0 0 0 0 1 L *', utc(2024, 5, 6)), utc(2024, 12, 1));
  assert.equal(nextUtc('0 0 0 0 * * last', utc(2024, 3, 11)), utc(2024, 3, 16));
  // Every field at its greatest: the last millisecond of a 31 December that is a Saturday.
  assert.equal(nextUtc('l l l l l l l', utc(2024, 1, 1)), utc(2033, 12, 31, 23, 59, 59, 999));
});

test("schedule - 'last' in dayOfMonth is the last day of each month (DLV-6)", () => {
  assert.deepEqual(
    firings('0 0 0 0 last * *', utc(2023, 12, 31), 4).map((time) =>
      new Date(time).toISOString().slice(0, 10),
    ),
    ['2024-01-31', '2024-02-29', '2024-03-31', '2024-04-30'],
  );
});

test('schedule - dayOfMonth 31 in February is the 29th in a leap year (DLV-6)', () => {
  assert.equal(nextUtc('0 0 0 0 31 2 *', utc(2024, 1, 1)), utc(2024, 2, 29));
  assert.equal(nextUtc('0 0 0 0 31 2 *', utc(2000, 1, 1)), utc(2000, 2, 29));
});

test('schedule - dayOfMonth 31 in February is the 28th in a non-leap year (DLV-6)', () => {
  assert.equal(nextUtc('0 0 0 0 31 2 *', utc(2023, 1, 1)), utc(2023, 2, 28));
  // 1900 is divisible by 4 but, being a century not divisible by 400, not a leap year.
  assert.equal(nextUtc('0 0 0 0 31 2 *', utc(1900, 1, 1)), utc(1900, 2, 28));
});

test('schedule - any dayOfMonth beyond the end of the month means its last day (DLV-6)', () => {
  assert.equal(nextUtc('0 0 0 0 29 2 *', utc(2023, 1, 1)), utc(2023, 2, 28));
  assert.equal(nextUtc('0 0 0 0 30 2 *', utc(2024, 1, 1)), utc(2024, 2, 29));
  assert.equal(nextUtc('0 0 0 0 31 * *', utc(2024, 4, 1)), utc(2024, 4, 30));
  assert.equal(nextUtc('0 0 0 0 31 * *', utc(2024, 4, 30)), utc(2024, 5, 31));
  // 30 and 31 both land on 30 April: one firing, not two.
  assert.deepEqual(firings('0 0 0 0 30,31 4 *', utc(2024, 4, 1), 2), [utc(2024, 4, 30), utc(2025, 4, 30)]);
});

test('schedule - milliseconds are rounded down to 0, 19, 39, ..., 979, 999 (DLV-6)', () => {
  assert.equal(roundMillisecond(0), 0);
  assert.equal(roundMillisecond(18), 0);
  assert.equal(roundMillisecond(19), 19);
  assert.equal(roundMillisecond(40), 39);
  assert.equal(roundMillisecond(50), 39);
  assert.equal(roundMillisecond(980), 979);
  assert.equal(roundMillisecond(999), 999);
  assert.equal(nextUtc('50 * * * * * *', utc(2024, 5, 6)), utc(2024, 5, 6, 0, 0, 0, 39));
  assert.equal(nextUtc('10 * * * * * *', utc(2024, 5, 6)), utc(2024, 5, 6, 0, 0, 1, 0));
});

test('schedule - a millisecond range 0-40 fires as 0-39 and 50-999 as 39-999 (DLV-6)', () => {
  const second = utc(2024, 5, 6, 12);
  const offsets = (text: string, count: number): number[] =>
    firings(text, second - 1, count).map((time) => time - second);
  assert.deepEqual(offsets('0-40 * * * * * *', 4), [0, 19, 39, 1000]);
  assert.deepEqual(offsets('50-999 * * * * * *', 3), [39, 59, 79]);
  assert.equal(offsets('50-999 * * * * * *', 49).at(-1), 999);
  assert.deepEqual(offsets('0-40 * * * * * *', 3), offsets('0-39 * * * * * *', 3));
});

test('schedule - * in the millisecond field fires 51 times a second (DLV-6)', () => {
  const second = utc(2024, 5, 6, 12);
  const times = firings('* * * * * * *', second - 1, 52).map((time) => time - second);
  const expected = [0, ...Array.from({ length: 50 }, (_, k) => 20 * (k + 1) - 1), 1000];
  assert.deepEqual(times, expected);
});

test('schedule - several schedules separated by ; take the soonest (DLV-6)', () => {
  // Nightly at 1 A.M. on weekdays, at 2 A.M. at the weekend; 2024-03-08 is a Friday.
  const text = '0 0 0 1 * * 2-6;0 0 0 2 * * 1,7';
  assert.equal(nextUtc(text, utc(2024, 3, 7, 12)), utc(2024, 3, 8, 1));
  assert.equal(nextUtc(text, utc(2024, 3, 8, 1, 30)), utc(2024, 3, 9, 2));
  assert.equal(nextUtc(text, utc(2024, 3, 10, 3)), utc(2024, 3, 11, 1));
  const swapped = '0 0 0 2 * * 1,7;0 0 0 1 * * 2-6';
  assert.deepEqual(firings(text, utc(2024, 3, 1), 14), firings(swapped, utc(2024, 3, 1), 14));
});

// --- Fields, ranges and lists ---------------------------------------------------------------

test('schedule - ranges and lists combine in one field (DLV-6)', () => {
  const minutes = firings('0 0 10-12,30,45-46,58-last * * * *', utc(2024, 5, 6, 9, 0), 9).map((time) =>
    new Date(time).getUTCMinutes(),
  );
  assert.deepEqual(minutes, [10, 11, 12, 30, 45, 46, 58, 59, 10]);
});

test('schedule - a single-value range and overlapping items are accepted (DLV-6)', () => {
  assert.deepEqual(firings('0 0 5-5,3-6,4 * * * *', utc(2024, 5, 6, 9), 5), [
    utc(2024, 5, 6, 9, 3),
    utc(2024, 5, 6, 9, 4),
    utc(2024, 5, 6, 9, 5),
    utc(2024, 5, 6, 9, 6),
    utc(2024, 5, 6, 10, 3),
  ]);
});

test('schedule - dayOfMonth and dayOfWeek must both match: 8-14 with Monday is the second Monday (DLV-6)', () => {
  const text = '0 0 0 0 8-14 * 2';
  assert.equal(nextUtc(text, utc(2024, 3, 1)), utc(2024, 3, 11));
  assert.equal(nextUtc(text, utc(2024, 3, 11)), utc(2024, 4, 8));
  // Friday the 13th is not the next Friday or the next 13th, as it would be with cron's OR.
  assert.equal(nextUtc('0 0 0 0 13 * 6', utc(2024, 1, 1)), utc(2024, 9, 13));
});

test('schedule - the last day of February on a Sunday is found years ahead (DLV-6)', () => {
  // 29 clamps to the 28th in common years; the first Sunday is 28 February 2027.
  assert.equal(nextUtc('0 0 0 12 29 2 1', utc(2024, 3, 1)), utc(2027, 2, 28, 12));
  assert.equal(nextUtc('0 0 0 12 29 2 1', utc(2027, 2, 28, 12)), utc(2032, 2, 29, 12));
});

test('schedule - seconds, minutes, hours, days, months and years roll over (DLV-6)', () => {
  assert.equal(nextUtc('0 * * * * * *', utc(2024, 12, 31, 23, 59, 59, 500)), utc(2025, 1, 1));
  assert.equal(nextUtc('0 0 * * * * *', utc(2024, 1, 31, 23, 59, 30)), utc(2024, 2, 1));
  assert.equal(nextUtc('0 0 0 0 1 1 *', utc(2024, 6, 15)), utc(2025, 1, 1));
  assert.equal(nextUtc('0 0 0 0 29 2 *', utc(2023, 3, 1)), utc(2024, 2, 29));
  assert.equal(nextUtc('0 30 59 23 * * *', utc(2024, 2, 29, 23, 59, 30)), utc(2024, 3, 1, 23, 59, 30));
  assert.equal(nextUtc('0 0 0 0 * 3 *', utc(2024, 3, 31, 1)), utc(2025, 3, 1));
});

test(
  'schedule - computing the next time steps by fields, not by milliseconds (DLV-6)',
  { timeout: 10_000 },
  () => {
    // 400 yearly firings in UTC and 40 in local time: hopeless if the walk went millisecond by millisecond.
    const yearly = firings('999 59 59 23 31 12 *', utc(2000, 1, 1), 400);
    assert.equal(yearly.at(-1), utc(2399, 12, 31, 23, 59, 59, 999));
    // A fixed zone: in some (Asia/Kathmandu, 1986) a New Year's midnight never happened.
    withTimeZone('Europe/Berlin', () => {
      const local = parseSchedule('0 0 0 0 1 1 *', { timeZone: 'local' });
      let time = utc(1970, 6, 1);
      for (let i = 0; i < 40; i += 1) time = local.nextScheduledTime(time);
      assert.equal(time, utc(2009, 12, 31, 23));
    });
  },
);

test('schedule - agrees with a brute-force search on random day and time schedules (DLV-6)', () => {
  const random = seededRandom(6);
  for (let round = 0; round < 150; round += 1) {
    const fields = {
      minute: randomField(random, 0, 59),
      hour: randomField(random, 0, 23),
      dayOfMonth: randomField(random, 1, 31),
      month: randomField(random, 1, 12),
      dayOfWeek: randomField(random, 1, 7),
    };
    const text = `0 0 ${fields.minute.text} ${fields.hour.text} ${fields.dayOfMonth.text} ${fields.month.text} ${fields.dayOfWeek.text}`;
    const after = utc(2024, 1, 1) + Math.floor(random() * 4 * 365 * 86_400_000);
    assert.equal(nextUtc(text, after), bruteForceByDay(fields, after), text);
  }
});

test('schedule - agrees with a brute-force search on random millisecond and second schedules (DLV-6)', () => {
  const random = seededRandom(50);
  for (let round = 0; round < 40; round += 1) {
    const millisecond = randomField(random, 0, 999);
    const second = randomField(random, 0, 59);
    const text = `${millisecond.text} ${second.text} * * * * *`;
    const after = utc(2024, 5, 6, 12) + Math.floor(random() * 60_000);
    const allowed = new Set([...millisecond.values].map(greatestListedAtOrBelow));
    let expected = after + 1;
    while (!allowed.has(expected % 1000) || !second.values.has(Math.floor(expected / 1000) % 60))
      expected += 1;
    assert.equal(nextUtc(text, after), expected, text);
  }
});

// --- Time zones ---------------------------------------------------------------------------

test('schedule - local time is the default and follows the process time zone (DLV-6)', () => {
  const schedule = parseSchedule('0 0 0 12 * * *');
  assert.equal(schedule.timeZone, 'local');
  // Expectations from the local Date API hold whatever TZ the machine runs in.
  assert.equal(
    schedule.nextScheduledTime(new Date(2024, 4, 15, 10, 7).getTime()),
    new Date(2024, 4, 15, 12).getTime(),
  );
  assert.equal(
    schedule.nextScheduledTime(new Date(2024, 4, 15, 12).getTime()),
    new Date(2024, 4, 16, 12).getTime(),
  );
  const sunday = parseSchedule('0 0 0 12 * * 1').nextScheduledTime(new Date(2024, 4, 15, 13).getTime());
  assert.equal(new Date(sunday).getDay(), 0);
  assert.equal(new Date(sunday).getHours(), 12);
});

test('schedule - local mode reads the wall clock of TZ, utc mode does not (DLV-6)', () => {
  withTimeZone('Asia/Kolkata', () => {
    const after = utc(2024, 5, 6);
    assert.equal(nextScheduledTime('0 0 0 12 * * *', after), utc(2024, 5, 6, 6, 30));
    assert.equal(nextScheduledTime('0 0 0 12 * * *', after, { timeZone: 'utc' }), utc(2024, 5, 6, 12));
  });
  withTimeZone('America/New_York', () => {
    assert.equal(nextScheduledTime('0 0 0 12 * * *', utc(2024, 5, 6)), utc(2024, 5, 6, 16));
  });
});

test('schedule - a wall-clock time skipped by a daylight-saving gap does not fire that day (DLV-6)', () => {
  withTimeZone('America/New_York', () => {
    // 10 March 2024: 02:00 EST jumps to 03:00 EDT (07:00Z), so 02:30 does not exist that day.
    assert.equal(nextScheduledTime('0 0 30 2 * * *', utc(2024, 3, 10, 5)), utc(2024, 3, 11, 6, 30));
    // Hourly: 01:00 EST, then 03:00 EDT.
    assert.equal(nextScheduledTime('0 0 0 * * * *', utc(2024, 3, 10, 6)), utc(2024, 3, 10, 7));
    assert.equal(nextScheduledTime('0 0 0 3 * * *', utc(2024, 3, 10, 5)), utc(2024, 3, 10, 7));
  });
});

test('schedule - a wall-clock time repeated by a daylight-saving overlap fires at both instants (DLV-6)', () => {
  withTimeZone('America/New_York', () => {
    // 3 November 2024: 02:00 EDT (06:00Z) falls back to 01:00 EST, so 01:30 happens twice.
    assert.equal(nextScheduledTime('0 0 30 1 * * *', utc(2024, 11, 3, 5)), utc(2024, 11, 3, 5, 30));
    assert.equal(nextScheduledTime('0 0 30 1 * * *', utc(2024, 11, 3, 5, 30)), utc(2024, 11, 3, 6, 30));
    assert.equal(nextScheduledTime('0 0 30 1 * * *', utc(2024, 11, 3, 6, 30)), utc(2024, 11, 4, 6, 30));
  });
});

test('schedule - local time agrees with a minute-by-minute search across daylight-saving changes (DLV-6)', () => {
  withTimeZone('Europe/Berlin', () => {
    for (const text of ['0 0 0,30 * * * *', '0 0 15 1-3 * * *', '0 0 0 2 * * *', '0 0 59 1,2 * * *']) {
      for (const start of [utc(2024, 3, 30, 22), utc(2024, 10, 26, 22)]) {
        let time = start;
        for (let i = 0; i < 6; i += 1) {
          const expected = bruteForceLocalMinutes(text, time);
          time = nextScheduledTime(text, time);
          assert.equal(time, expected, `${text} after ${new Date(start).toISOString()}`);
        }
      }
    }
  });
});

// --- API ------------------------------------------------------------------------------------

test('schedule - the relative API returns milliseconds from now (DLV-6)', () => {
  const now = utc(2024, 5, 6, 10, 10);
  assert.equal(nextScheduledTimeRelative('0 0 0,30 * * * *', now, { timeZone: 'utc' }), 20 * 60_000);
  assert.equal(
    nextScheduledTimeRelative('0 0 0,30 * * * *', utc(2024, 5, 6, 10, 30), { timeZone: 'utc' }),
    30 * 60_000,
  );
});

test('schedule - the parsed schedule keeps its text and the string API parses it (DLV-6)', () => {
  const text = '  0 0 0,30 * * * *  ;\t0 0 15 9 * * 2 ';
  const schedule = parseSchedule(text, { timeZone: 'utc' });
  assert.equal(schedule.text, text);
  assert.equal(schedule.timeZone, 'utc');
  assert.equal(schedule.nextScheduledTime(utc(2024, 5, 6, 9, 10)), utc(2024, 5, 6, 9, 15));
  assert.equal(nextUtc(text, utc(2024, 5, 6, 9, 10)), utc(2024, 5, 6, 9, 15));
});

test('schedule - fields may be separated by any run of whitespace (DLV-6)', () => {
  assert.equal(nextUtc('0\t0  15 \t * * * *', utc(2024, 5, 6, 9)), utc(2024, 5, 6, 9, 15));
});

test('schedule - no time before the end of the date range is Infinity (DLV-6)', () => {
  assert.equal(nextUtc('0 0 0 0 1 1 *', 8.64e15 - 1000), Infinity);
  assert.equal(nextScheduledTimeRelative('0 0 0 0 1 1 *', 8.64e15 - 1000, { timeZone: 'utc' }), Infinity);
});

test('schedule - a time that is not a finite epoch time is rejected (DLV-6)', () => {
  const schedule = parseSchedule('* * * * * * *');
  for (const bad of [Number.NaN, Infinity, -Infinity, 9e15]) {
    assert.throws(() => schedule.nextScheduledTime(bad), InvalidArgumentError);
  }
});

// --- Syntax errors ------------------------------------------------------------------------

test('schedule - a syntax error names the column and the field (DLV-6)', () => {
  const error = syntaxError('0 0 0 x * * *');
  assert.ok(error instanceof Error);
  assert.ok(error instanceof JMSError);
  assert.equal(error.name, 'ScheduleSyntaxError');
  assert.equal(error.column, 7);
  assert.equal(error.schedule, '0 0 0 x * * *');
  assert.equal(
    error.message,
    "invalid schedule at column 7: expected a number, a range, '*' or 'last' in field 'hour'",
  );
});

test('schedule - a wrong number of fields is a syntax error (DLV-6)', () => {
  const missing = (text: string, column: number, field: string): void => {
    const error = syntaxError(text);
    assert.equal(error.column, column, text);
    assert.match(
      error.message,
      new RegExp(`^invalid schedule at column ${column}: missing field '${field}'`),
    );
  };
  missing('', 1, 'millisecond');
  missing('   ', 1, 'millisecond');
  missing('0 0 0 0 * *', 12, 'dayOfWeek');
  missing('0 0 0', 6, 'hour');
  missing('0 0 0 0 * * *;', 15, 'millisecond');
  missing('0 0 0 0 * * *;;0 0 0 0 * * *', 15, 'millisecond');
  const extra = syntaxError('0 0 0 0 * * * 5');
  assert.equal(extra.column, 15);
  assert.match(extra.message, /^invalid schedule at column 15: unexpected text after field 'dayOfWeek'/);
});

test('schedule - values out of their field range are syntax errors (DLV-6)', () => {
  const cases: readonly [string, number, string][] = [
    ['1000 0 0 0 * * *', 1, "1000 is out of range (0-999) in field 'millisecond'"],
    ['0 60 0 0 * * *', 3, "60 is out of range (0-59) in field 'second'"],
    ['0 0 60 0 * * *', 5, "60 is out of range (0-59) in field 'minute'"],
    ['0 0 0 24 * * *', 7, "24 is out of range (0-23) in field 'hour'"],
    ['0 0 0 0 0 * *', 9, "0 is out of range (1-31) in field 'dayOfMonth'"],
    ['0 0 0 0 32 * *', 9, "32 is out of range (1-31) in field 'dayOfMonth'"],
    ['0 0 0 0 * 0 *', 11, "0 is out of range (1-12) in field 'month'"],
    ['0 0 0 0 * 13 *', 11, "13 is out of range (1-12) in field 'month'"],
    ['0 0 0 0 * * 0', 13, "0 is out of range (1-7) in field 'dayOfWeek'"],
    ['0 0 0 0 * * 1-8', 15, "8 is out of range (1-7) in field 'dayOfWeek'"],
  ];
  for (const [text, column, problem] of cases) {
    const error = syntaxError(text);
    assert.equal(error.message, `invalid schedule at column ${column}: ${problem}`, text);
    assert.equal(error.column, column, text);
  }
});

test('schedule - malformed fields are syntax errors at the offending column (DLV-6)', () => {
  const cases: readonly [string, number, RegExp][] = [
    ['0 0 0,,15 * * * *', 7, /expected a number, a range, '\*' or 'last' in field 'minute'$/],
    ['0 0 ,15 * * * *', 5, /expected a number, a range, '\*' or 'last' in field 'minute'$/],
    ['0 0 15, * * * *', 8, /expected a number, a range, '\*' or 'last' in field 'minute'$/],
    ['0 0 -5 * * * *', 5, /expected a number, a range, '\*' or 'last' in field 'minute'$/],
    ['0 0 5- * * * *', 7, /expected a number or 'last' after '-' in field 'minute'$/],
    ['0 0 1-2-3 * * * *', 8, /expected ',' after a value or range in field 'minute'$/],
    ['0 0 *,5 * * * *', 5, /'\*' must stand alone in field 'minute'$/],
    ['0 0 5,* * * * *', 7, /'\*' must stand alone in field 'minute'$/],
    ['0 0 lastt * * * *', 5, /expected a number, a range, '\*' or 'last' in field 'minute'$/],
    ['0 0 1.5 * * * *', 5, /expected a number, a range, '\*' or 'last' in field 'minute'$/],
    ['0 0 0 0 * jan *', 11, /in field 'month'$/],
    ['0 0 0 17-9 * * *', 7, /range '17-9' runs backwards in field 'hour'; write '17-23,0-9' to wrap around$/],
    ['0 0 0 last-5 * * *', 7, /range 'last-5' runs backwards in field 'hour'/],
  ];
  for (const [text, column, pattern] of cases) {
    const error = syntaxError(text);
    assert.equal(error.column, column, text);
    assert.match(error.message, new RegExp(`^invalid schedule at column ${column}: `), text);
    assert.match(error.message, pattern, text);
  }
});

test('schedule - an error in a later ; schedule counts columns from the start of the text (DLV-6)', () => {
  const error = syntaxError('0 0 0 0 * * *; 0 0 0 25 * * *');
  assert.equal(error.column, 22);
  assert.match(error.message, /^invalid schedule at column 22: 25 is out of range \(0-23\) in field 'hour'$/);
});

test('schedule - the leftmost problem is reported first (DLV-6)', () => {
  assert.equal(syntaxError('0 0 99 0 * * * 5').column, 5);
  assert.equal(syntaxError('0 0 99 0 *').column, 5);
});

test('schedule - the string API throws the same syntax errors (DLV-6)', () => {
  assert.throws(() => nextScheduledTime('0 0 0', 0), ScheduleSyntaxError);
  assert.throws(() => nextScheduledTimeRelative('0 0 0 0 * * 8', 0), ScheduleSyntaxError);
});

// --- Brute-force references ---------------------------------------------------------------

interface RandomField {
  readonly text: string;
  readonly values: ReadonlySet<number>;
}

/** A deterministic pseudo-random generator (mulberry32), so failures reproduce. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `*`, or a list of one to three values and ranges, with the values it stands for. */
function randomField(random: () => number, min: number, max: number): RandomField {
  const pick = (): number => min + Math.floor(random() * (max - min + 1));
  if (random() < 0.3) return { text: '*', values: new Set(range(min, max)) };
  const items: string[] = [];
  const values = new Set<number>();
  const count = 1 + Math.floor(random() * 3);
  for (let i = 0; i < count; i += 1) {
    const [a, b] = [pick(), pick()].sort((x, y) => x - y) as [number, number];
    const single = random() < 0.5;
    items.push(single ? (a === max && random() < 0.5 ? 'last' : String(a)) : `${a}-${b}`);
    for (const value of single ? [a] : range(a, b)) values.add(value);
  }
  return { text: items.join(','), values };
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** WebLogic's listed millisecond values, 0, 19, 39, ..., 979, 999. */
const LISTED_MILLISECONDS = [0, ...range(1, 50).map((k) => 20 * k - 1)];

function greatestListedAtOrBelow(value: number): number {
  return Math.max(...LISTED_MILLISECONDS.filter((listed) => listed <= value));
}

/** Day by day, then minute by minute within a matching day, written without the module's helpers. */
function bruteForceByDay(
  fields: Record<'minute' | 'hour' | 'dayOfMonth' | 'month' | 'dayOfWeek', RandomField>,
  after: number,
): number {
  const firstDay = Math.floor(after / 86_400_000) * 86_400_000;
  for (let day = firstDay; day < firstDay + 400 * 366 * 86_400_000; day += 86_400_000) {
    const date = new Date(day);
    const length = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
    const dayOfMonth = date.getUTCDate();
    const dayOfMonthMatches =
      fields.dayOfMonth.values.has(dayOfMonth) ||
      (dayOfMonth === length && [...fields.dayOfMonth.values].some((value) => value > length));
    if (!fields.month.values.has(date.getUTCMonth() + 1)) continue;
    if (!dayOfMonthMatches || !fields.dayOfWeek.values.has(date.getUTCDay() + 1)) continue;
    for (let minute = 0; minute < 1440; minute += 1) {
      const time = day + minute * 60_000;
      const matches =
        fields.hour.values.has(Math.floor(minute / 60)) && fields.minute.values.has(minute % 60);
      if (time > after && matches) return time;
    }
  }
  return Infinity;
}

/** Minute by minute with the local Date getters, for schedules of whole minutes with `*` days. */
function bruteForceLocalMinutes(text: string, after: number): number {
  const [, , minuteField, hourField] = text.split(' ');
  const expand = (field: string | undefined, max: number): Set<number> => {
    if (field === '*') return new Set(range(0, max));
    const values = new Set<number>();
    for (const item of (field ?? '').split(',')) {
      const [from, to = from] = item.split('-').map(Number) as [number, number?];
      for (const value of range(from, to)) values.add(value);
    }
    return values;
  };
  const minutes = expand(minuteField, 59);
  const hours = expand(hourField, 23);
  let time = Math.floor(after / 60_000) * 60_000 + 60_000;
  while (true) {
    const date = new Date(time);
    if (minutes.has(date.getMinutes()) && hours.has(date.getHours())) return time;
    time += 60_000;
  }
}
