/**
 * The load generator, run by bench/run.ts as its own process on its own core:
 * a warm-up, then a measured run of one scenario against one server. Prints
 * the measurement as JSON on stdout.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import autocannon, { type AutocannonRequest, type Result } from 'autocannon';
import Database from 'better-sqlite3';
import type { Manifest } from './generate.js';
import { databaseName, isPostgresUrl, updatedAtBook } from './postgres.js';
import { readRequests, requestSource, SCENARIOS, writeBodies, type Req } from './scenarios.js';

export interface LoadSpec {
  url: string;
  scenario: string;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  manifestFile: string;
  /** The server's database (a SQLite file or a postgres:// URL), read to learn each document's current updatedAt before a PATCH. */
  database: string;
  /** The server's process, whose CPU time is read before and after the measured run (Linux). */
  serverPid?: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  /** Responses by status code, and connection errors and timeouts. */
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  /**
   * How busy each side was during the measured run, as a share of one core:
   * the server's process (all its threads) and the load generator's. A
   * server well under 1 while the load generator is near 1 was held back by
   * the load, not by its own core. Absent where /proc cannot be read.
   * On PostgreSQL, `database`: its backends serving the run's database,
   * on any core (as a share of one).
   */
  busy?: { server: number; load: number; database?: number };
}

/** Clock ticks per second, the unit of /proc/<pid>/stat's CPU times. */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** A process's CPU time so far (user and system, all threads), in seconds; null if it cannot be read. */
function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (in parentheses, which may hold spaces): utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** CPU times so far of the PostgreSQL backends serving database `name` (by their command line, `postgres: … NAME host(port) state`). */
function backendSeconds(name: string): Map<number, number> {
  const times = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmd.startsWith('postgres: ') || !cmd.includes(` ${name} `)) continue;
    } catch {
      continue; // gone
    }
    const t = cpuSeconds(Number(entry));
    if (t !== null) times.set(Number(entry), t);
  }
  return times;
}

/** The CPU time the backends of `before` and those started since spent in between. */
function backendsUsed(name: string, before: Map<number, number>): number {
  let used = 0;
  for (const [pid, t] of backendSeconds(name)) used += t - (before.get(pid) ?? 0);
  return used;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function toRequest(r: Req): AutocannonRequest {
  const headers: Record<string, string> = { authorization: `Bearer ${r.key}` };
  if (r.body !== undefined) headers['content-type'] = 'application/json';
  return { method: r.method, path: r.path, headers, body: r.body };
}

/**
 * Reads cycle through a fixed list, which autocannon turns into bytes once;
 * writes need new content each time, built per request. (Building every
 * request would slow the load generator enough to make it, not the server,
 * the limit for the ceiling.)
 */
function requestsFor(scenario: string, manifest: Manifest, next: () => Req, learn?: (status: number, body: string) => void): AutocannonRequest[] {
  const reads = readRequests(manifest) as Record<string, Req[]>;
  const fixed = reads[scenario];
  if (fixed) return fixed.map(toRequest);
  return [{ setupRequest: () => toRequest(next()), ...(learn ? { onResponse: learn } : {}) }];
}

async function measure(spec: LoadSpec, requests: AutocannonRequest[], seconds: number, record: boolean): Promise<LoadResult> {
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const statuses: Record<string, number> = {};
  // The measured run starts with its first response, not when autocannon is
  // called: autocannon first builds every request's bytes for each
  // connection (for `get`, 4,000 requests for each of 50), and sends
  // nothing meanwhile.
  let started: bigint | null = null;
  let serverBefore: number | null = null;
  const postgres = isPostgresUrl(spec.database) ? databaseName(spec.database) : null;
  let databaseBefore = new Map<number, number>();
  let loadBefore = process.cpuUsage();
  const begin = () => {
    serverBefore = spec.serverPid === undefined ? null : cpuSeconds(spec.serverPid);
    if (postgres !== null) databaseBefore = backendSeconds(postgres);
    loadBefore = process.cpuUsage();
    started = process.hrtime.bigint();
  };
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon(
      { url: spec.url, connections: spec.connections, duration: seconds, timeout: 30, requests },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (started === null) begin();
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (!record) return;
      if (count === latencies.length) {
        const bigger = new Float64Array(latencies.length * 2);
        bigger.set(latencies);
        latencies = bigger;
      }
      latencies[count++] = ms;
    });
  });
  const elapsed = started === null ? 0 : Number(process.hrtime.bigint() - started) / 1e9;
  const serverAfter = spec.serverPid === undefined ? null : cpuSeconds(spec.serverPid);
  const loadUsed = process.cpuUsage(loadBefore);
  const databaseUsed = postgres === null ? null : backendsUsed(postgres, databaseBefore);
  const busy =
    serverBefore === null || serverAfter === null || elapsed === 0
      ? undefined
      : {
          server: (serverAfter - serverBefore) / elapsed,
          load: (loadUsed.user + loadUsed.system) / 1e6 / elapsed,
          ...(databaseUsed === null ? {} : { database: databaseUsed / elapsed }),
        };
  const sorted = latencies.subarray(0, count).sort();
  const ok = Object.entries(statuses).reduce((n, [s, c]) => (s.startsWith('2') ? n + c : n), 0);
  return {
    requests: count,
    seconds: elapsed,
    rps: elapsed === 0 ? 0 : ok / elapsed,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: count > 0 ? sorted[count - 1]! : NaN,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    ...(busy ? { busy } : {}),
  };
}

/**
 * Each document's current updatedAt: on SQLite read from the file at each
 * PATCH; on PostgreSQL, which cannot be read synchronously, kept in a book
 * that the answers tell which documents to read again (postgres.ts).
 */
export async function updatedAtSource(database: string, manifest: Manifest): Promise<{
  get(id: string): string | null;
  learn?: (status: number, body: string) => void;
  close(): Promise<void> | void;
}> {
  if (isPostgresUrl(database)) return updatedAtBook(database, manifest.callers.flatMap((c) => c.docIds));
  const db = new Database(database, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const updatedAt = db.prepare('SELECT updated_at FROM documents WHERE id = ?').pluck();
  return { get: (id: string) => (updatedAt.get(id) as string | null | undefined) ?? null, close: () => void db.close() };
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const manifest = JSON.parse(readFileSync(spec.manifestFile, 'utf8')) as Manifest;
  const writes = SCENARIOS.find((s) => s.id === spec.scenario)?.writes ?? false;
  const updatedAt = writes ? await updatedAtSource(spec.database, manifest) : { get: () => null, close() {} };
  const next = requestSource(spec.scenario, manifest, { manifest, bodies: writeBodies(64), currentUpdatedAt: updatedAt.get });
  const requests = requestsFor(spec.scenario, manifest, next, updatedAt.learn);
  try {
    if (spec.warmupSeconds > 0) await measure(spec, requests, spec.warmupSeconds, false);
    return await measure(spec, requests, spec.durationSeconds, true);
  } finally {
    await updatedAt.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LoadSpec;
  const result = await runLoad(spec);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
