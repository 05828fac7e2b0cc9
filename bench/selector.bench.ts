/**
 * Selector benchmarks (SEL-1, SEL-4, SEL-6), each next to its baseline in the same run:
 *
 * (a) header/property comparisons, compiled selector vs a hand-written JS predicate doing the same
 *     test on the same messages (the limit): >= 10,000,000 evaluations/s and >= 50% of the limit;
 * (b) XPath selectors on a ~2 KB XML body, body parsing included (a fresh message each time):
 *     the WebLogic form `JMS_BEA_SELECT('xpath', path) = 'x'` >= 100,000 messages/s; the Artemis
 *     form of the same question, `XPATH 'path = ''x'''`, within 20% of it; a general XPath outside
 *     the fast paths (position(), count()) at least at Artemis's own rate for it (16,000/s); shown
 *     next to xmldom + xpath.js alone, which general XPath went through before;
 * (c) topic publish to 1,000 / 10,000 / 100,000 `X IS NOT NULL` subscribers of which 2 match,
 *     with the subscriber index vs a plain loop testing every selector: >= 100,000 publishes/s
 *     and flat across subscriber counts.
 *
 * Run: `npx tsx bench/selector.bench.ts` (or `npm run bench selector`).
 */
import { createRequire } from 'node:module';
import { DOMParser } from '@xmldom/xmldom';
import { Message } from '../src/jms/message/message.js';
import { XMLMessage } from '../src/jms/message/xml-message.js';
import { SubscriberIndex, parseSelector, type MessageSelector } from '../src/jms/selector/index.js';
import { best, measure, printJson, printTable, target, type BenchRow } from './lib.js';

// --- (a) simple comparisons ---

const COLORS = ['red', 'green', 'blue', 'red'];

function simpleMessages(count: number): Message[] {
  const messages: Message[] = [];
  for (let i = 0; i < count; i++) {
    const message = new Message();
    message.setJMSPriority(i % 10);
    message.setStringProperty('color', COLORS[i % COLORS.length]!);
    message.setIntProperty('weight', (i * 7) % 30);
    message.setStringProperty('region', i % 2 === 0 ? 'emea' : 'apac');
    messages.push(message);
  }
  return messages;
}

async function simpleComparisons(): Promise<{ rows: BenchRow[]; ratio: number; selected: number }> {
  const messages = simpleMessages(1024);
  const selector = parseSelector("JMSPriority > 3 AND color = 'red' AND weight BETWEEN 10 AND 20");
  const handWritten = (message: Message): boolean => {
    if (!(message.getJMSPriority() > 3)) return false;
    if (message.getTypedProperty('color')?.value !== 'red') return false;
    const weight = message.getTypedProperty('weight')?.value;
    return typeof weight === 'number' && weight >= 10 && weight <= 20;
  };
  const rounds = 5_000;
  const ops = rounds * messages.length;
  let sink = 0;
  const run = (test: (message: Message) => boolean) => () => {
    let count = 0;
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < messages.length; i++) if (test(messages[i]!)) count++;
    }
    sink += count;
  };
  const compiled = await best('compiled selector', ops, run(selector.matches), 5);
  const limit = await best('hand-written predicate (limit)', ops, run(handWritten), 5);
  const selected = messages.filter(selector.matches).length;
  if (selected !== messages.filter(handWritten).length || sink < 0)
    throw new Error('selector and predicate disagree');
  return { rows: [compiled, limit], ratio: compiled.rate / limit.rate, selected };
}

// --- (b) XPath on ~2 KB bodies ---

function orderXml(seed: number): string {
  const items: string[] = [];
  for (let i = 1; i <= 14; i++) {
    items.push(
      `  <item sku="S-${seed}-${i}" kind="${i % 3 === 0 ? 'tool' : 'part'}">\n` +
        `    <id>${seed * 100 + i}</id>\n    <name>Item ${i} &amp; co</name>\n` +
        `    <price currency="EUR">${(i * 3.25).toFixed(2)}</price>\n  </item>`,
    );
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<order id="${seed}" status="${seed % 2 === 0 ? 'open' : 'closed'}">\n<customer><name>Customer ${seed}</name></customer>\n${items.join('\n')}\n</order>\n`;
}

interface XPathModule {
  parse(expression: string): { evaluate(options: { node: unknown }): { stringValue(): string } };
}

interface XPathRates {
  rows: BenchRow[];
  fastRate: number;
  booleanRate: number;
  generalRate: number;
  bodyBytes: number;
}

/** Artemis 2.40's rate for its XPATH filter on the same body, measured on the same machine. */
const ARTEMIS_XPATH_RATE = 16_000;

async function xpathSelectors(): Promise<XPathRates> {
  // Bodies arrive from brokers as bytes and are decoded into flat strings; build them the same way
  // (a string glued from template pieces would be a rope, slower to scan and not what runs).
  const bodies = Array.from({ length: 64 }, (_, i) => Buffer.from(orderXml(i)).toString('utf8'));
  const bodyBytes = Math.round(
    bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0) / bodies.length,
  );
  const fast = parseSelector("JMS_BEA_SELECT('xpath', '/order/item[2]/name/text()') = 'Item 2 & co'");
  // The same question in the Artemis boolean form.
  const booleanForm = parseSelector("XPATH '/order/item[2]/name/text() = ''Item 2 & co'''");
  // position()=2 is the same test, outside the fast paths: xpath.js on the DOM over our parse.
  const general = parseSelector("XPATH '/order/item[position()=2]/name/text() = ''Item 2 & co'''");
  const counted = parseSelector("XPATH 'count(/order/item[@kind=''tool'']) = 4'");
  const count = 10_000;
  // The machine is shared: more, shorter runs make the best run a fair one.
  const runs = 9;
  const evaluate = (selector: MessageSelector, n: number) => () => {
    let matched = 0;
    for (let i = 0; i < n; i++) if (selector.matches(new XMLMessage(bodies[i % bodies.length]))) matched++;
    if (matched !== n) throw new Error(`expected every body to match, ${matched} of ${n} did`);
  };
  const xpath = createRequire(import.meta.url)('xpath') as XPathModule;
  const compiled = xpath.parse('/order/item[2]/name/text()');
  const rawXmldom = (n: number) => () => {
    const parser = new DOMParser({ onError: () => undefined });
    for (let i = 0; i < n; i++) {
      const dom = parser.parseFromString(bodies[i % bodies.length]!, 'text/xml');
      if (compiled.evaluate({ node: dom }).stringValue() !== 'Item 2 & co')
        throw new Error('xmldom disagrees');
    }
  };
  // Several selectors on one message: the body is parsed once, later ones reuse the tree.
  const five = [
    fast,
    parseSelector("XPATH '/order/customer/name'"),
    parseSelector("JMS_BEA_SELECT('xpath', '/order/@status') IN ('open', 'closed')"),
    parseSelector("JMS_BEA_SELECT('xpath', '//item[@kind=''tool'']/id') IS NOT NULL"),
    parseSelector("JMS_BEA_SELECT('xpath', '/order/item[14]/price/@currency') = 'EUR'"),
  ];
  const fiveSelectors = () => {
    for (let i = 0; i < count; i++) {
      const message = new XMLMessage(bodies[i % bodies.length]);
      for (const selector of five) if (!selector.matches(message)) throw new Error('expected a match');
    }
  };
  // The forms are compared with each other, so their runs take turns: a burst of load on the
  // shared machine then slows one run of each, not all the runs of one.
  const rows = await interleaved(
    [
      ["JMS_BEA_SELECT('xpath', path) = 'x' (fast path)", count, evaluate(fast, count)],
      ["XPATH 'path = ''x''' (fast path)", count, evaluate(booleanForm, count)],
      ['XPATH with position() (tape DOM + xpath.js)', count / 2, evaluate(general, count / 2)],
      ['XPATH with count() (tape DOM + xpath.js)', count / 2, evaluate(counted, count / 2)],
      ['5 XPath selectors, one parse', count, fiveSelectors],
    ],
    runs,
  );
  rows.push(await best('xmldom parse + xpath.js alone (baseline)', count / 10, rawXmldom(count / 10)));
  const baseline = rows[rows.length - 1]!.rate;
  for (const row of rows) row['x xmldom+xpath.js'] = Math.round((row.rate / baseline) * 10) / 10;
  const fastRate = rows[0]!.rate;
  for (const row of rows) row['x fast path'] = Math.round((row.rate / fastRate) * 100) / 100;
  return {
    rows,
    fastRate,
    booleanRate: rows[1]!.rate,
    generalRate: Math.min(rows[2]!.rate, rows[3]!.rate),
    bodyBytes,
  };
}

/** The best of `runs` runs of each subject, after one warm-up each, the subjects taking turns. */
async function interleaved(subjects: [string, number, () => void][], runs: number): Promise<BenchRow[]> {
  for (const [, , fn] of subjects) fn();
  const top: (BenchRow | undefined)[] = subjects.map(() => undefined);
  for (let run = 0; run < runs; run++) {
    for (let i = 0; i < subjects.length; i++) {
      const [name, ops, fn] = subjects[i]!;
      const row = await measure(name, ops, fn);
      if (top[i] === undefined || row.rate > top[i]!.rate) top[i] = row;
    }
  }
  return top.map((row) => row!);
}

// --- (c) indexed topic fan-out ---

async function fanOut(): Promise<{ rows: Record<string, string | number>[]; rates: number[] }> {
  const rows: Record<string, string | number>[] = [];
  const rates: number[] = [];
  for (const subscribers of [1_000, 10_000, 100_000]) {
    const index = new SubscriberIndex<number>();
    const selectors: MessageSelector[] = [];
    for (let i = 0; i < subscribers; i++) {
      const selector = parseSelector(`user${i} IS NOT NULL`);
      selectors.push(selector);
      index.add(i, selector);
    }
    const messages: Message[] = [];
    for (let i = 0; i < 256; i++) {
      const message = new Message();
      message.setBooleanProperty(`user${(i * 7919) % subscribers}`, true);
      message.setBooleanProperty(`user${(i * 104729 + 1) % subscribers}`, true);
      message.setStringProperty('channel', 'im');
      messages.push(message);
    }
    const publishes = 100_000;
    const indexed = await best(
      `index, ${subscribers} subscribers`,
      publishes,
      () => {
        let delivered = 0;
        for (let i = 0; i < publishes; i++) delivered += index.match(messages[i % messages.length]!).length;
        if (delivered !== publishes * 2)
          throw new Error(`expected 2 matches per publish, got ${delivered / publishes}`);
      },
      9,
    );
    // The plain loop is O(subscribers) per publish: fewer publishes keep its run short.
    const loopPublishes = Math.max(20, Math.round(20_000_000 / subscribers / 10));
    const loop = await best(
      `plain loop, ${subscribers} subscribers`,
      loopPublishes,
      () => {
        let delivered = 0;
        for (let i = 0; i < loopPublishes; i++) {
          const message = messages[i % messages.length]!;
          for (const selector of selectors) if (selector.matches(message)) delivered++;
        }
        if (delivered !== loopPublishes * 2) throw new Error('plain loop disagrees');
      },
      2,
    );
    rates.push(indexed.rate);
    rows.push({
      subscribers,
      'indexed publishes/s': indexed.rate,
      'plain loop publishes/s': loop.rate,
      speedup: Math.round(indexed.rate / loop.rate),
    });
  }
  return { rows, rates };
}

const simple = await simpleComparisons();
printTable(
  "(a) JMSPriority > 3 AND color = 'red' AND weight BETWEEN 10 AND 20 (evaluations)",
  simple.rows.map((row) => ({ ...row, rate: row.rate })),
);
const xpathResult = await xpathSelectors();
printTable(
  `(b) XPath selector on a ${xpathResult.bodyBytes}-byte XML body, fresh message each time (messages)`,
  xpathResult.rows,
);
const fan = await fanOut();
printTable('(c) topic publish, `userN IS NOT NULL` subscribers, 2 match per publish', fan.rows);

const [compiledRow] = simple.rows;
const flatness = Math.min(...fan.rates) / Math.max(...fan.rates);
console.log('');
target(
  `(a) compiled selector >= 10,000,000 evaluations/s (${compiledRow!.rate.toLocaleString('en-US')})`,
  compiledRow!.rate >= 10_000_000,
);
target(
  `(a) compiled selector >= 50% of the hand-written predicate (${Math.round(simple.ratio * 100)}%)`,
  simple.ratio >= 0.5,
);
target(
  `(b) XPath selector >= 100,000 messages/s with parsing (${xpathResult.fastRate.toLocaleString('en-US')})`,
  xpathResult.fastRate >= 100_000,
);
target(
  `(b) XPATH boolean form within 20% of the JMS_BEA_SELECT form (${Math.round((xpathResult.booleanRate / xpathResult.fastRate) * 100)}%)`,
  xpathResult.booleanRate >= 0.8 * xpathResult.fastRate,
);
target(
  `(b) general XPath >= ${ARTEMIS_XPATH_RATE.toLocaleString('en-US')} messages/s, Artemis's rate (slowest ${xpathResult.generalRate.toLocaleString('en-US')})`,
  xpathResult.generalRate >= ARTEMIS_XPATH_RATE,
);
target(
  `(c) indexed publish >= 100,000 publishes/s at every size (min ${Math.min(...fan.rates).toLocaleString('en-US')})`,
  Math.min(...fan.rates) >= 100_000,
);
target(
  `(c) indexed publish flat across 1k..100k subscribers (slowest/fastest ${flatness.toFixed(2)} >= 0.5)`,
  flatness >= 0.5,
);
printJson('selector', {
  simpleRate: compiledRow!.rate,
  simpleRatio: Math.round(simple.ratio * 100) / 100,
  xpathRates: Object.fromEntries(xpathResult.rows.map((row) => [row.name, row.rate])),
  fanOut: fan.rows,
});
