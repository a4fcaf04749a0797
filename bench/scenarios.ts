/**
 * What the load benchmark asks Folio, scenario by scenario. Requests rotate
 * over the data set's callers (a heavy user in their personal workspace and
 * in the largest team, a typical user, a user with shared projects), so each
 * figure covers both large and small visible sets.
 */
import type { Caller, Manifest } from './generate.js';
import { markdownWriter, prng, vocabulary, int } from './text.js';

export interface Req {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  key: string;
  body?: string;
}

export interface Targets {
  /** Minimum share of the ceiling's requests per second. */
  ratio?: number;
  minRps?: number;
  maxP99Ms?: number;
}

export interface Scenario {
  id: string;
  title: string;
  /** Writes change the data: the run starts them on a fresh copy of it. */
  writes: boolean;
  /** On SQLite, Folio alone on its core. */
  targets: Targets;
  /** On PostgreSQL, with the database server on the same machine. */
  postgresTargets: Targets;
}

export const SCENARIOS: Scenario[] = [
  { id: 'me', title: 'GET /v1/me', writes: false, targets: { ratio: 0.6 }, postgresTargets: {} },
  { id: 'list', title: 'GET /v1/documents', writes: false, targets: { ratio: 0.4 }, postgresTargets: {} },
  { id: 'search', title: 'GET /v1/documents?q= (word in ~1 %)', writes: false, targets: { minRps: 2000, maxP99Ms: 20 }, postgresTargets: { maxP99Ms: 50 } },
  { id: 'search-rare', title: 'GET /v1/documents?q= (rare word)', writes: false, targets: {}, postgresTargets: { maxP99Ms: 30 } },
  { id: 'get', title: 'GET /v1/documents/{id}', writes: false, targets: { ratio: 0.5 }, postgresTargets: { minRps: 3000 } },
  { id: 'post', title: 'POST /v1/documents', writes: true, targets: { minRps: 2000, maxP99Ms: 50 }, postgresTargets: { minRps: 500, maxP99Ms: 100 } },
  { id: 'patch', title: 'PATCH /v1/documents/{id}', writes: true, targets: { minRps: 2000, maxP99Ms: 50 }, postgresTargets: { minRps: 500, maxP99Ms: 100 } },
  { id: 'mixed', title: 'mixed: 80 % reads, 20 % writes', writes: true, targets: {}, postgresTargets: {} },
];

/** The server-wide memory target, checked on every scenario. */
export const MAX_RSS_MB = 200;

/** Distinct documents read by the getDocument scenario. */
const GET_REQUESTS = 4000;

/** `path` in the caller's workspace: with its `organizationId` when it is a team's. */
export const scoped = (path: string, c: Caller) =>
  c.orgId === null ? path : `${path}${path.includes('?') ? '&' : '?'}organizationId=${c.orgId}`;

/** Read requests of each read scenario: a finite list the load cycles through. */
export function readRequests(m: Manifest): Record<'me' | 'list' | 'search' | 'search-rare' | 'get', Req[]> {
  const get: Req[] = [];
  const withDocs = m.callers.filter((c) => c.docIds.length > 0);
  for (let i = 0; i < GET_REQUESTS; i++) {
    const c = withDocs[i % withDocs.length]!;
    const id = c.docIds[Math.floor(i / withDocs.length) % c.docIds.length]!;
    get.push({ method: 'GET', path: scoped(`/v1/documents/${id}`, c), key: c.key });
  }
  const q = (w: string) => `/v1/documents?q=${encodeURIComponent(w)}`;
  return {
    me: m.callers.map((c) => ({ method: 'GET', path: '/v1/me', key: c.key })),
    list: m.callers.map((c) => ({ method: 'GET', path: scoped('/v1/documents', c), key: c.key })),
    search: m.callers.map((c) => ({ method: 'GET', path: scoped(q(m.words.common.word), c), key: c.key })),
    'search-rare': m.callers.map((c) => ({ method: 'GET', path: scoped(q(m.words.rare.word), c), key: c.key })),
    get,
  };
}

/** Markdown bodies for writes, 1–4 KB like the data set. */
export function writeBodies(count: number): string[] {
  const rnd = prng(7);
  const writer = markdownWriter(vocabulary(6000, prng(1)), rnd);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const title = writer.title(() => {});
    out.push(writer.body(title, int(rnd, 1024, 4096), () => {}));
  }
  return out;
}

export interface WriteContext {
  manifest: Manifest;
  bodies: string[];
  /** The document's current updatedAt, as a client that just read it would know it. */
  currentUpdatedAt(id: string): string | null;
}

/** An endless sequence of requests for a scenario. */
export function requestSource(id: string, m: Manifest, w: WriteContext): () => Req {
  let n = 0;
  const cycle = (list: Req[]) => () => list[n++ % list.length]!;
  const reads = readRequests(m);

  const post = () => {
    const i = n++;
    const c = m.callers[i % m.callers.length]!;
    const body: Record<string, string> = { title: `Bench note ${i}`, contentMarkdown: w.bodies[i % w.bodies.length]! };
    if (c.orgId !== null) body.organizationId = c.orgId;
    return { method: 'POST', path: '/v1/documents', key: c.key, body: JSON.stringify(body) } satisfies Req;
  };
  // Every document of every caller, interleaved: a document comes round
  // again only after all the others, long after its last edit was answered.
  const targets: { c: Caller; docId: string }[] = [];
  for (let k = 0; targets.length < m.callers.reduce((n, c) => n + c.docIds.length, 0); k++) {
    for (const c of m.callers) if (k < c.docIds.length) targets.push({ c, docId: c.docIds[k]! });
  }
  let edit = 0;
  const patch = () => {
    const i = edit++;
    const { c, docId } = targets[i % targets.length]!;
    const body: Record<string, unknown> = {
      contentMarkdown: w.bodies[i % w.bodies.length]!,
      expectedUpdatedAt: w.currentUpdatedAt(docId),
    };
    if (c.orgId !== null) body.organizationId = c.orgId;
    return { method: 'PATCH', path: `/v1/documents/${docId}`, key: c.key, body: JSON.stringify(body) } satisfies Req;
  };

  switch (id) {
    case 'me':
    case 'list':
    case 'search':
    case 'search-rare':
    case 'get':
      return cycle(reads[id]);
    case 'post':
      return post;
    case 'patch':
      return patch;
    case 'mixed': {
      // Per 20 requests: 7 reads of a document, 4 lists, 3 common and 1 rare
      // search, 1 me (80 % reads), 2 creations and 2 edits (20 % writes).
      const slots = 'GGLSGMGLSPGRLGSCGLPC';
      const counters = { G: 0, L: 0, S: 0, R: 0, M: 0 };
      const from = (list: Req[], k: keyof typeof counters) => list[counters[k]++ % list.length]!;
      let slot = 0;
      return () => {
        const s = slots[slot++ % slots.length]!;
        switch (s) {
          case 'G':
            return from(reads.get, 'G');
          case 'L':
            return from(reads.list, 'L');
          case 'S':
            return from(reads.search, 'S');
          case 'R':
            return from(reads['search-rare'], 'R');
          case 'M':
            return from(reads.me, 'M');
          case 'C':
            return post();
          default:
            return patch();
        }
      };
    }
    default:
      throw new Error(`unknown scenario ${id}`);
  }
}
