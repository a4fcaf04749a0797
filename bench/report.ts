/** The benchmark's results as a table, JSON and Markdown, with each target checked. */
import type { LoadResult } from './load.js';
import { MAX_RSS_MB, type Targets } from './scenarios.js';

export interface Measured extends LoadResult {
  /** Highest resident set size of the server during warm-up and measurement. */
  rssMb: number;
  /** The rate of each round, in the order run; the figures above are those of the median round (bench/run.ts). */
  roundsRps?: number[];
}

/**
 * One server's rounds of a scenario as one measurement: the rate, latencies
 * and time of the round with the median rate, the responses, errors and
 * timeouts of all rounds (so that any failure shows), the highest RSS.
 */
export function mergeRounds(rounds: Measured[]): Measured {
  const byRate = [...rounds].sort((a, b) => a.rps - b.rps);
  const mid = byRate[(byRate.length - 1) >> 1]!;
  const statuses: Record<string, number> = {};
  for (const r of rounds) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  const sum = (f: (r: Measured) => number) => rounds.reduce((n, r) => n + f(r), 0);
  return {
    ...mid,
    requests: sum((r) => r.requests),
    statuses,
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    rssMb: Math.max(...rounds.map((r) => r.rssMb)),
    roundsRps: rounds.map((r) => r.rps),
  };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** A share as the reports print it: `61 %`. */
export const percent = (x: number) => `${(x * 100).toFixed(0)} %`;

/** How busy a measurement's server and load generator were, as `server/load %`: `99/61 %`; on PostgreSQL with its backends': `99/61 % db 80 %`. */
export const busyShares = (busy: LoadResult['busy']): string =>
  busy ? `${(busy.server * 100).toFixed(0)}/${percent(busy.load)}${busy.database === undefined ? '' : ` db ${percent(busy.database)}`}` : 'unknown';

/** How busy the server's core and the load generator's were in each round, as a line: `Folio 99/61 %, 100/58 %`. */
export function busyRounds(rounds: LoadResult[], who: string): string {
  const each = rounds.map((r) => busyShares(r.busy));
  return `${who} (server/load) ${each.join(', ')}`;
}

/** The rounds' median busy shares of the server's core and of the load generator's, or null where none was read. */
export function medianBusy(rounds: LoadResult[]): { server: number; load: number; database?: number } | null {
  const known = rounds.flatMap((r) => (r.busy ? [r.busy] : []));
  if (known.length === 0) return null;
  const database = known.flatMap((b) => (b.database === undefined ? [] : [b.database]));
  return { server: median(known.map((b) => b.server)), load: median(known.map((b) => b.load)), ...(database.length > 0 ? { database: median(database) } : {}) };
}

/** The rounds' median busy shares as `server % / load %`, or `unknown`. */
function medianBusyShares(rounds: LoadResult[]): string {
  const busy = medianBusy(rounds);
  if (busy === null) return 'unknown';
  return `${percent(busy.server)} / ${percent(busy.load)}${busy.database === undefined ? '' : ` / ${percent(busy.database)}`}`;
}

/**
 * A server held back by its load generator rather than its own core: its
 * process used under 90 % of its core while the load generator used over
 * 90 % of its own (medians of the rounds). A ceiling measured so is below
 * what its core could do, and Folio's share of it reads high.
 */
export function loadBound(rounds: LoadResult[]): boolean {
  const busy = medianBusy(rounds);
  return busy !== null && busy.server < 0.9 && busy.load > 0.9;
}

/** Rounds of each server of a scenario, kept for the report of how busy the cores were. */
export interface Rounds {
  folio: LoadResult[];
  ceiling: LoadResult[];
}

export interface ScenarioReport {
  id: string;
  title: string;
  targets: Targets;
  folio: Measured;
  ceiling: Measured;
  /** Every round of each server, in the order run. */
  rounds?: Rounds;
}

export interface RunReport {
  startedAt: string;
  /** loadAverage: the system's 1, 5 and 15 minute load averages as the run started and as it ended. */
  machine: { cpus: number; cpu: string; node: string; loadAverage?: number[][] };
  options: Record<string, unknown>;
  data: {
    docs: number;
    generationSeconds: number;
    databaseMb: number;
    words: { common: { word: string; docs: number }; rare: { word: string; docs: number } };
    callers: { name: string; scoped: boolean; documents: number }[];
  };
  scenarios: ScenarioReport[];
}

/**
 * Each round's share of the ceiling: Folio's rate over the ceiling's in
 * the run that followed it. Both see the machine as it was in those
 * seconds, where the two medians of the rounds can each come from another
 * minute, when the machine ran at another speed.
 */
export function roundShares(s: ScenarioReport): number[] {
  const f = s.folio.roundsRps ?? [s.folio.rps];
  const c = s.ceiling.roundsRps ?? [s.ceiling.rps];
  return f.map((rps, i) => rps / c[i]!);
}

/** Folio's share of the ceiling: the median of the rounds' shares. */
export function ratio(s: ScenarioReport): number {
  return median(roundShares(s));
}

/**
 * Each round's share of the ceiling by core time instead of rate: the core
 * time the ceiling's process spent on a response over Folio's (each
 * process's busy share of its core over its rate), or nothing for a round
 * whose busy shares were not read. Where a load generator, not a server's
 * core, set the rates (loadBound), the rate shares compare the load
 * generator with itself, and reach or pass 100 %; this one still compares
 * the servers' work. It is not the target's measure: a core used at 60 %
 * spends more time a request than one kept saturated, so it is only a
 * second reading.
 */
export function coreShares(s: ScenarioReport): number[] {
  if (!s.rounds) return [];
  return s.rounds.folio.flatMap((f, i) => {
    const c = s.rounds!.ceiling[i];
    if (!f.busy || !c?.busy || f.busy.server === 0 || c.rps === 0) return [];
    return [c.busy.server / c.rps / (f.busy.server / f.rps)];
  });
}

/** The median of the rounds' core shares, as a report prints it, or `—`. */
export function coreShare(s: ScenarioReport): string {
  const shares = coreShares(s);
  return shares.length === 0 ? '—' : percent(median(shares));
}

/** Each target of the scenario, met or missed, in words. */
export function verdicts(s: ScenarioReport): { target: string; met: boolean }[] {
  const out: { target: string; met: boolean }[] = [];
  const t = s.targets;
  if (t.ratio !== undefined) out.push({ target: `≥ ${t.ratio * 100} % of ceiling`, met: ratio(s) >= t.ratio });
  if (t.minRps !== undefined) out.push({ target: `≥ ${t.minRps} req/s`, met: s.folio.rps >= t.minRps });
  if (t.maxP99Ms !== undefined) out.push({ target: `p99 ≤ ${t.maxP99Ms} ms`, met: s.folio.p99 <= t.maxP99Ms });
  out.push({ target: `RSS ≤ ${MAX_RSS_MB} MB`, met: s.folio.rssMb <= MAX_RSS_MB });
  return out;
}

/** Non-2xx responses, connection errors and timeouts. */
export const failures = (m: LoadResult) =>
  Object.entries(m.statuses)
    .filter(([status]) => !status.startsWith('2'))
    .reduce((n, [, c]) => n + c, 0) +
  m.errors +
  m.timeouts;

function rows(reports: ScenarioReport[]): string[][] {
  return reports.map((s) => [
    s.id,
    s.folio.rps.toFixed(0),
    s.folio.p50.toFixed(2),
    s.folio.p99.toFixed(2),
    s.ceiling.rps.toFixed(0),
    percent(ratio(s)),
    coreShare(s),
    s.folio.rssMb.toFixed(0),
    String(failures(s.folio)),
    verdicts(s)
      .map((v) => `${v.met ? 'met' : 'MISSED'}: ${v.target}`)
      .join('; '),
  ]);
}

const HEAD = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'ceiling req/s', 'ratio', 'by core', 'RSS MB', 'failed', 'targets'];

/** A plain-text table for the terminal. */
export function formatTable(reports: ScenarioReport[]): string {
  const all = [HEAD, ...rows(reports)];
  const widths = HEAD.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return all.map((r) => r.map((cell, i) => (i === 0 || i === r.length - 1 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd()).join('\n');
}

export function formatMarkdown(r: RunReport): string {
  const table = [HEAD, HEAD.map(() => '---'), ...rows(r.scenarios)].map((row) => `| ${row.join(' | ')} |`).join('\n');
  const o = r.options;
  const load = r.machine.loadAverage?.map((l) => l.map((x) => x.toFixed(2)).join(', '));
  const on = o.database === 'postgres' ? ', on PostgreSQL (the database server on this machine too, not pinned)' : '';
  return `# Folio load benchmark, ${r.startedAt}${on}

${r.data.docs} documents (generated in ${r.data.generationSeconds.toFixed(1)} s, ${r.data.databaseMb.toFixed(0)} MB);
search words "${r.data.words.common.word}" (in ${r.data.words.common.docs} documents) and "${r.data.words.rare.word}" (in ${r.data.words.rare.docs}).
${o.connections} connections, ${o.warmup} s warm-up, ${o.duration} s measured per scenario and server in ${o.rounds} rounds, Folio and the ceiling in turn;
req/s and latencies are each server's median round, the ratio the median of the rounds' shares (Folio's rate over the ceiling's that followed it),
"by core" the same by the core time each server spent on a response (a second reading, for when a load generator set the rates);
Folio on core ${o.serverCore} with LOG_LEVEL=${o.logLevel}, load on core ${o.loadCore}.
Machine: ${r.machine.cpus} × ${r.machine.cpu}, Node ${r.machine.node}${load ? `; load average ${load.join(' at the start, ')} at the end` : ''}.

${table}

${coresSection(r.scenarios)}Callers (requests rotate over them): ${r.data.callers.map((c) => `${c.name} (${c.documents} documents sampled)`).join('; ')}.

Ceiling: a bare node:http server on the same core replaying Folio's captured responses.
Latencies are measured by the load generator, from sending a request to receiving its response.
`;
}

/** How busy the cores were: the median share of its core each server used, and of its core the load generator. */
function coresSection(scenarios: ScenarioReport[]): string {
  const measured = scenarios.filter((s) => s.rounds !== undefined);
  if (measured.length === 0) return '';
  const lines = measured.map((s) => {
    const warn = loadBound(s.rounds!.ceiling) ? ' (the ceiling was held back by the load generator: the ratio reads high)' : '';
    return `- ${s.id}: Folio ${medianBusyShares(s.rounds!.folio)}, ceiling ${medianBusyShares(s.rounds!.ceiling)}${warn}`;
  });
  const database = measured.some((s) => s.rounds!.folio.some((r) => r.busy?.database !== undefined)) ? " / PostgreSQL's backends of the run's database" : '';
  return `Cores busy during the measured runs, server / load generator${database} (medians of the rounds; 100 % is one core):
${lines.join('\n')}

`;
}
