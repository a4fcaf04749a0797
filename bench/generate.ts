/**
 * The load benchmark's data set, written through Folio's store into a fresh
 * SQLite file or an empty PostgreSQL database: users, organizations,
 * memberships, projects and shares, keys, and documents of 1–4 KB of
 * Markdown. Deterministic for a given seed, except for ids and key secrets.
 *
 *   tsx bench/generate.ts --docs 100000 --out bench/results/data.db
 */
import { existsSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateKey, hashKey, lastFour } from '../src/domain/keys.js';
import { openSqliteBulkLoader } from '../src/store/sqlite/bulk-load.js';
import { isPostgresUrl, openPostgresBulkLoader } from './postgres.js';
import type { Viewer } from '../src/store/store.js';
import { int, markdownWriter, pick, prng, vocabulary, zipf } from './text.js';

export interface Caller {
  /** What this caller stands for in the results. */
  name: string;
  key: string;
  userId: string;
  /** The organization the requests are scoped to, or null for the personal workspace. */
  orgId: string | null;
  /** Documents this caller can read and update in that scope (a sample, up to 20,000). */
  docIds: string[];
}

export interface Manifest {
  docs: number;
  users: number;
  orgs: number;
  projects: number;
  seed: number;
  seconds: number;
  callers: Caller[];
  /** Search words, with the number of documents that contain them (as a word or word prefix). */
  words: { common: { word: string; docs: number }; rare: { word: string; docs: number } };
}

export interface GenerateOptions {
  /** A SQLite file, made anew, or the URL of an empty PostgreSQL database. */
  database: string;
  docs: number;
  users?: number;
  orgs?: number;
  projects?: number;
  seed?: number;
  log?: (line: string) => void;
}

const DAY = 86_400_000;
const POOL = 20_000;

export async function generate(options: GenerateOptions): Promise<Manifest> {
  const started = Date.now();
  const { database, docs } = options;
  const userCount = options.users ?? 1000;
  const orgCount = options.orgs ?? 50;
  const projectCount = options.projects ?? 500;
  const seed = options.seed ?? 1;
  const log = options.log ?? (() => {});
  const postgres = isPostgresUrl(database);
  if (!postgres) for (const suffix of ['', '-wal', '-shm']) if (existsSync(database + suffix)) rmSync(database + suffix);

  const rnd = prng(seed);
  const loader = postgres ? await openPostgresBulkLoader(database) : openSqliteBulkLoader(database);
  const { store } = loader;

  // Time runs from a year ago to a minute ago: documents are created in order, some updated later.
  const end = Date.now() - 60_000;
  const start = end - 365 * DAY;
  const iso = (ms: number) => new Date(ms).toISOString();

  // --- Users, organizations, memberships -----------------------------------
  const users: string[] = [];
  const plans: (string | null)[] = [];
  for (let i = 0; i < userCount; i++) {
    const plan = i % 10 === 9 ? null : i % 20 === 3 ? 'free' : 'pro_monthly';
    const u = await store.createUser({ email: `user${i}@bench.folio.test`, name: `Bench User ${i}`, plan, now: iso(start - DAY + i) });
    users.push(u.id);
    plans.push(plan);
  }
  const orgs: string[] = [];
  for (let j = 0; j < orgCount; j++) {
    const o = await store.createOrg({ name: `Team ${j}`, plan: j % 5 === 4 ? null : 'team_yearly', now: iso(start - DAY) });
    orgs.push(o.id);
  }
  const members: string[][] = orgs.map(() => []);
  const userRank = zipf(userCount, 1.0);
  const orgRank = zipf(orgCount, 1.0);
  const join = async (j: number, i: number) => {
    if (await store.addMember(orgs[j]!, users[i]!, iso(start - DAY / 2 + i))) members[j]!.push(users[i]!);
  };
  for (let i = 0; i < userCount; i++) {
    const r = rnd();
    const count = r < 0.3 ? 0 : r < 0.75 ? 1 : r < 0.95 ? 2 : 3;
    for (let k = 0; k < count; k++) await join(orgRank(rnd), i);
  }
  await join(0, 0); // the heaviest user is in the largest team
  for (let j = 0; j < orgCount; j++) if (members[j]!.length === 0) await join(j, int(rnd, 0, userCount - 1));

  // --- Projects and shares ---------------------------------------------------
  interface Project {
    id: string;
    orgId: string | null;
    owner: string;
    sharees: string[];
  }
  const personalProjects: Project[] = [];
  const orgProjects: Project[] = [];
  const sharedWith = new Map<string, number>();
  for (let p = 0; p < projectCount; p++) {
    const personal = p % 5 < 2;
    const orgIndex = personal ? -1 : orgRank(rnd);
    const orgId = personal ? null : orgs[orgIndex]!;
    const owner = personal ? users[userRank(rnd)]! : pick(rnd, members[orgIndex]!);
    const { id } = await store.createProject({ creatorId: owner, orgId, name: `Project ${p}`, description: null, now: iso(start + p) });
    const project: Project = { id, orgId, owner, sharees: [] };
    const candidates = personal ? users : members[orgIndex]!;
    for (let s = int(rnd, 0, 3); s > 0; s--) {
      const sharee = pick(rnd, candidates);
      if (sharee !== owner && (await store.shareProject(id, sharee))) {
        project.sharees.push(sharee);
        if (personal) sharedWith.set(sharee, (sharedWith.get(sharee) ?? 0) + 1);
      }
    }
    (personal ? personalProjects : orgProjects).push(project);
  }

  // --- Callers: the users whose keys the benchmark uses -----------------------
  const hasPlan = (u: string) => plans[users.indexOf(u)] === 'pro_monthly';
  const heavy = users[0]!;
  const typical = users.find((u, i) => i >= userCount / 2 && hasPlan(u))!;
  const sharee =
    [...sharedWith.entries()].filter(([u]) => u !== heavy && u !== typical && hasPlan(u)).sort((a, b) => b[1] - a[1])[0]?.[0] ??
    users.find((u, i) => i > 0 && i !== users.indexOf(typical) && hasPlan(u))!;
  const keys = new Map<string, string>();
  for (const u of [heavy, typical, sharee]) {
    const secret = generateKey();
    await store.createKey({ userId: u, name: 'bench', canWrite: true, hash: hashKey(secret), last4: lastFour(secret), now: iso(start) });
    keys.set(u, secret);
  }
  const callers: Caller[] = [
    { name: 'heavy user, personal', key: keys.get(heavy)!, userId: heavy, orgId: null, docIds: [] },
    { name: 'heavy user, largest team', key: keys.get(heavy)!, userId: heavy, orgId: orgs[0]!, docIds: [] },
    { name: 'typical user, personal', key: keys.get(typical)!, userId: typical, orgId: null, docIds: [] },
    { name: 'user with shared projects, personal', key: keys.get(sharee)!, userId: sharee, orgId: null, docIds: [] },
  ];
  /** Which caller pools a new document goes to, by its workspace (and project). */
  const poolOf = (workspace: string, projectId: string | null): Caller | undefined => {
    if (workspace === orgs[0] && projectId === null) return callers[1];
    if (workspace === heavy) return callers[0];
    if (workspace === typical) return callers[2];
    if (workspace === sharee) return callers[3];
    return undefined;
  };

  // --- Documents -------------------------------------------------------------
  const vocab = vocabulary(6000, rnd);
  const writer = markdownWriter(vocab, rnd);
  const df = new Int32Array(vocab.words.length);
  const stamp = new Int32Array(vocab.words.length).fill(-1);
  let current = 0;
  const onWord = (r: number) => {
    for (const c of vocab.prefixOf[r]!) {
      if (stamp[c] !== current) {
        stamp[c] = current;
        df[c]!++;
      }
    }
  };
  // Writes happen in time order, as they would have: documents are created
  // one after the other over the year, and about a third are edited later
  // (a paragraph added), each edit applied when its time comes.
  const step = (end - start - DAY) / Math.max(1, docs);
  interface Edit {
    at: number;
    viewer: Viewer;
    id: string;
    content: string;
  }
  const edits = new MinHeap<Edit>((a, b) => a.at - b.at);
  const applyEdit = async (e: Edit) => {
    const outcome = await store.updateDocument(e.viewer, e.id, { contentMarkdown: e.content, expectedUpdatedAt: null }, () => iso(e.at));
    if (outcome.status !== 'updated') throw new Error(`edit of ${e.id}: ${outcome.status}`);
  };
  const BATCH = 1000;
  let k = 0;
  while (k < docs) {
    await loader.batch(async () => {
      for (let writes = 0; writes < BATCH && k < docs; writes++) {
        const at = start + Math.floor(k * step) + int(rnd, 0, 999);
        if (edits.size > 0 && edits.peek()!.at <= at) {
          await applyEdit(edits.pop()!);
          continue;
        }
        current = k;
        const r = rnd();
        let viewer: Viewer;
        let projectId: string | null = null;
        let workspace: string;
        if (r < 0.45 || (r < 0.6 && personalProjects.length === 0)) {
          const u = users[userRank(rnd)]!;
          viewer = { userId: u, orgId: null };
          workspace = u;
        } else if (r < 0.6) {
          const p = pick(rnd, personalProjects);
          const creator = p.sharees.length > 0 && rnd() < 0.2 ? pick(rnd, p.sharees) : p.owner;
          viewer = { userId: creator, orgId: null };
          projectId = p.id;
          workspace = p.owner;
        } else if (r < 0.85 || orgProjects.length === 0) {
          const j = orgRank(rnd);
          viewer = { userId: pick(rnd, members[j]!), orgId: orgs[j]! };
          workspace = orgs[j]!;
        } else {
          const p = pick(rnd, orgProjects);
          const creator = p.sharees.length > 0 && rnd() < 0.2 ? pick(rnd, p.sharees) : p.owner;
          viewer = { userId: creator, orgId: p.orgId };
          projectId = p.id;
          workspace = p.orgId!;
        }
        const title = writer.title(onWord);
        const content = writer.body(title, int(rnd, 1024, 4096), onWord);
        const doc = await store.createDocument(viewer, { title, contentMarkdown: content, projectId, threadId: null }, iso(at));
        if (!doc) throw new Error('a generated document could not be created');
        const pool = poolOf(workspace, projectId);
        if (pool && pool.docIds.length < POOL) pool.docIds.push(doc.id);
        if (rnd() < 0.3) {
          const more = writer.body(title, int(rnd, 80, 400), onWord).split('\n').slice(2).join('\n');
          edits.push({ at: at + 1 + Math.floor(rnd() * (end - at - 1)), viewer, id: doc.id, content: `${content}\n${more}` });
        }
        k++;
        if (k % 10_000 === 0) log(`  ${k} documents, ${((Date.now() - started) / 1000).toFixed(0)} s`);
      }
    });
  }
  while (edits.size > 0) {
    await loader.batch(async () => {
      for (let writes = 0; writes < BATCH && edits.size > 0; writes++) await applyEdit(edits.pop()!);
    });
  }

  // --- Search words -------------------------------------------------------
  const closest = (target: number) => {
    let best = -1;
    for (let r = 0; r < df.length; r++) {
      if (vocab.folded[r]!.length < 4 || df[r]! < 1) continue;
      if (best < 0 || Math.abs(df[r]! - target) < Math.abs(df[best]! - target)) best = r;
    }
    return { word: vocab.words[best]!, docs: df[best]! };
  };
  const words = { common: closest(docs * 0.01), rare: closest(Math.max(3, docs * 0.0001)) };

  await loader.close();
  return {
    docs,
    users: userCount,
    orgs: orgCount,
    projects: projectCount,
    seed,
    seconds: (Date.now() - started) / 1000,
    callers,
    words,
  };

}

/** A binary min-heap. */
class MinHeap<T> {
  private items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => number) {}
  get size() {
    return this.items.length;
  }
  peek(): T | undefined {
    return this.items[0];
  }
  push(item: T) {
    const xs = this.items;
    xs.push(item);
    for (let i = xs.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (this.less(xs[i]!, xs[parent]!) >= 0) break;
      [xs[i], xs[parent]] = [xs[parent]!, xs[i]!];
      i = parent;
    }
  }
  pop(): T | undefined {
    const xs = this.items;
    const top = xs[0];
    const last = xs.pop();
    if (xs.length > 0 && last !== undefined) {
      xs[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < xs.length && this.less(xs[l]!, xs[m]!) < 0) m = l;
        if (r < xs.length && this.less(xs[r]!, xs[m]!) < 0) m = r;
        if (m === i) break;
        [xs[i], xs[m]] = [xs[m]!, xs[i]!];
        i = m;
      }
    }
    return top;
  }
}

// Standalone: generate a data set and print its manifest.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { docs: { type: 'string', default: '100000' }, out: { type: 'string', default: 'bench/results/data.db' }, seed: { type: 'string', default: '1' } },
  });
  const manifest = await generate({ database: values.out!, docs: Number(values.docs), seed: Number(values.seed), log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(`${JSON.stringify({ ...manifest, callers: manifest.callers.map((c) => ({ ...c, docIds: c.docIds.length })) }, null, 2)}\n`);
}
