/** What bench/compare.ts and bench/ladder.ts share: their measurement options, checked, and the median of rounds. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SCENARIOS } from './scenarios.js';

/** The command-line options both tools take, for node:util's parseArgs; each adds its own and its number of rounds. */
export const ROUND_ARGS = {
  only: { type: 'string', default: 'me' },
  duration: { type: 'string', default: '5' },
  warmup: { type: 'string', default: '1' },
  docs: { type: 'string', default: '100000' },
  connections: { type: 'string', default: '50' },
  'server-core': { type: 'string', default: '0' },
  'load-core': { type: 'string', default: '1' },
  help: { type: 'boolean', default: false },
} as const;

export interface RoundOptions {
  rounds?: string;
  duration?: string;
  warmup?: string;
  connections?: string;
  /** Scenarios, comma-separated. */
  only?: string;
}

/** Checks the options (positive numbers, known scenarios) and returns the number of rounds and the scenarios. */
export function checkRoundOptions(args: RoundOptions): { rounds: number; scenarios: string[] } {
  const positive = (name: string, value: string | undefined, integer: boolean) => {
    const n = Number(value);
    if (!(n > 0) || (integer && !Number.isInteger(n))) throw new Error(`--${name}: expected a positive ${integer ? 'whole ' : ''}number, got "${value}"`);
    return n;
  };
  const rounds = positive('rounds', args.rounds, true);
  positive('duration', args.duration, false);
  positive('connections', args.connections, true);
  if (!(Number(args.warmup) >= 0)) throw new Error(`--warmup: expected a number of seconds, got "${args.warmup}"`);
  const scenarios = (args.only ?? '').split(',');
  for (const s of scenarios) if (!SCENARIOS.some((x) => x.id === s)) throw new Error(`--only: no scenario "${s}"`);
  return { rounds, scenarios };
}

/** The data set of `docs` documents an earlier `npm run bench` saved under `results` (bench/results): its database and manifest. */
export function savedDataSet(results: string, docs: string): { db: string; manifestFile: string } {
  const db = join(results, 'data', `docs-${docs}.db`);
  const manifestFile = join(results, 'data', `docs-${docs}.json`);
  if (!existsSync(db) || !existsSync(manifestFile)) {
    throw new Error(`no data set of ${docs} documents: run "npm run bench -- --docs ${docs} --only me" first`);
  }
  return { db, manifestFile };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}
