/**
 * Bridge rates over the last 15 minutes, kept in the page from polling `GET /bridges`: the
 * gateway keeps no history, and a chart of what happened since the page opened answers "is it
 * moving, did it stop?" without a metrics server.
 */

/** How far back the chart reaches. */
export const WINDOW_MS = 15 * 60_000;

interface Sample {
  at: number;
  out: number;
}

export class RateHistory {
  readonly #samples = new Map<string, Sample[]>();

  /** Records a bridge's `out` counter at `at` (ms); drops samples older than the window. */
  record(bridge: string, out: number, at: number): void {
    const samples = this.#samples.get(bridge) ?? [];
    samples.push({ at, out });
    while (samples.length > 0 && samples[0]!.at < at - WINDOW_MS) samples.shift();
    this.#samples.set(bridge, samples);
  }

  /** Messages per second between consecutive samples, with the time each ends at. */
  rates(bridge: string): { at: number; rate: number }[] {
    const samples = this.#samples.get(bridge) ?? [];
    const rates: { at: number; rate: number }[] = [];
    for (let i = 1; i < samples.length; i++) {
      const previous = samples[i - 1]!;
      const sample = samples[i]!;
      const seconds = (sample.at - previous.at) / 1000;
      // A restarted bridge counts from zero again: no negative rate.
      if (seconds > 0) rates.push({ at: sample.at, rate: Math.max(0, sample.out - previous.out) / seconds });
    }
    return rates;
  }
}

const WIDTH = 240;
const HEIGHT = 40;

/** An SVG line of the rates over the window ending `now`, with its peak as the accessible label. */
export function rateChart(rates: { at: number; rate: number }[], now: number): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
  svg.setAttribute('width', String(WIDTH));
  svg.setAttribute('height', String(HEIGHT));
  svg.setAttribute('class', 'chart');
  const peak = Math.max(0, ...rates.map((r) => r.rate));
  const last = rates.at(-1)?.rate ?? 0;
  svg.setAttribute('role', 'img');
  svg.setAttribute(
    'aria-label',
    `out rate over the last 15 minutes: now ${last.toFixed(1)}/s, peak ${peak.toFixed(1)}/s`,
  );
  const title = document.createElementNS(ns, 'title');
  title.textContent = svg.getAttribute('aria-label');
  svg.append(title);
  const x = (at: number) => WIDTH - ((now - at) / WINDOW_MS) * WIDTH;
  const y = (rate: number) => HEIGHT - 2 - (peak === 0 ? 0 : (rate / peak) * (HEIGHT - 4));
  const line = document.createElementNS(ns, 'polyline');
  line.setAttribute('points', rates.map((r) => `${x(r.at).toFixed(1)},${y(r.rate).toFixed(1)}`).join(' '));
  svg.append(line);
  return svg;
}
