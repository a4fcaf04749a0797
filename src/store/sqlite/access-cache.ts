import type { Db } from './database.js';
import { NO_SNAPSHOT, type ReadSnapshot } from './read-snapshot.js';
import { WAL_INDEX_HEADER_BYTES, type WalIndexHeader } from './wal-index-header.js';

/**
 * What the API looks up on every request and almost never changes — the
 * principal behind a key hash, a user's organizations, a membership, the
 * projects a viewer's searches may read (documents.ts) — kept
 * in memory only while the database is unchanged since it was read.
 *
 * Every lookup first asks SQLite's `PRAGMA data_version`, which changes as
 * soon as any other connection (another process: `folio key revoke`, `folio
 * org remove-member`, …) commits; then the whole cache is dropped. Given the
 * database's WAL-index header (wal-index-header.ts), it asks only when the
 * header has changed since it last asked, which every commit does. Writes
 * through this connection that can change what is cached (users, keys,
 * organizations, memberships, plans, projects, shares) call `invalidate()` (see
 * store.ts). So a revoked key or a removed member is refused on the very
 * next request, exactly as without the cache.
 *
 * It also keeps responses the store rendered (`rendered`: a page of
 * documents, a document), for as long as no connection, this one included,
 * has committed since they were read: any change to the WAL-index header
 * drops them all. Without a readable header nothing is kept.
 */
export function accessCache(
  db: Db,
  options: { header?: WalIndexHeader | null; maxEntries?: number; snapshot?: ReadSnapshot; renderedBytes?: number } = {},
) {
  const { header = null, maxEntries = 10_000, snapshot = NO_SNAPSHOT, renderedBytes = RENDERED_BYTES } = options;
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  let seen = dataVersion.get();
  let entries = new Map<string, unknown>();
  const rendered = renderedResponses(renderedBytes);
  // The WAL-index header as read just before `data_version` was last asked,
  // and as read now: while they are equal no connection has committed since.
  const settled = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  const latest = Buffer.alloc(WAL_INDEX_HEADER_BYTES);

  /**
   * Drops every entry if any connection has committed since the last look;
   * then the turn's reads may share one read transaction (read-snapshot.ts),
   * which a commit seen here first ends.
   */
  function refresh() {
    const read = header !== null && header.read(latest);
    if (!read || !latest.equals(settled)) {
      rendered.drop();
      snapshot.release();
      const version = dataVersion.get();
      if (version !== seen) {
        seen = version;
        entries = new Map();
      }
      // Only once asked, and not inside a transaction: there data_version
      // answers for the transaction's snapshot, which may be older than
      // a commit the header already shows. (A commit after the header was
      // read changes it again.)
      if (read && !db.inTransaction) latest.copy(settled);
    }
    if (read) snapshot.hold();
  }

  /**
   * Keeps `value` for `key`: loaded by `get`, or read from the database
   * after a `peek` of the same turn found nothing (no commit of this
   * connection in between).
   */
  function keep<V>(key: string, value: V): V {
    if (entries.size >= maxEntries) entries = new Map();
    entries.set(key, value);
    return value;
  }

  return {
    /** The value held for `key`, if it is still true; nothing is read or kept. */
    peek<V>(key: string): V | undefined {
      refresh();
      return entries.get(key) as V | undefined;
    },
    get<V>(key: string, load: () => V): V {
      refresh();
      if (entries.has(key)) return entries.get(key) as V;
      return keep(key, load());
    },
    keep,
    /**
     * The response rendered for `key`: kept from an earlier request while
     * no connection has committed since it was read, or rendered now, and
     * kept if it was read in the turn's read transaction, which holds every
     * commit (refresh begins it only once the header is found settled, and
     * lets it go when the header changes; never during a write of this
     * connection, which may yet be undone), and no commit was seen while it
     * rendered. `key` must name everything the response depends on, the
     * viewer first. A render that finds nothing (null) is not kept: any
     * caller could fill the budget with look-ups of ids that do not exist.
     */
    rendered<Body extends Buffer | null>(key: string, render: () => Body): Body {
      refresh();
      const held = rendered.get(key);
      if (held !== undefined) return held as Body;
      const generation = rendered.generation;
      const body = render();
      if (body !== null && snapshot.holding() && rendered.generation === generation) rendered.keep(key, body);
      return body;
    },
    invalidate() {
      entries = new Map();
      rendered.drop();
    },
  };
}

/**
 * How many bytes of rendered responses the access cache keeps at most, and
 * the largest it keeps: enough for the documents and pages agents read
 * again and again, little beside what the server needs for request bodies
 * (bench/README.md, "Memory under large bodies").
 */
export const RENDERED_BYTES = 16 * 1024 * 1024;
const LARGEST_RENDERED = 256 * 1024;
/**
 * What an entry costs beside its body and its key's characters, rounded up:
 * on Node 20 a Buffer that better-sqlite3 returns takes about 190 bytes of
 * V8's heap and 200 of native memory (its backing store), the key's string
 * about 30 beside its characters, the map's slot about 40.
 */
const ENTRY_BYTES = 512;

/** Rendered responses by key, within a byte budget: the oldest kept go first. */
function renderedResponses(budget: number) {
  let held = new Map<string, Buffer>();
  // The keys in the order they were kept, the oldest still held at `next`:
  // finding the oldest by iterating the map would step over every entry
  // deleted before it, which V8 leaves in place until the map is rebuilt.
  let order: string[] = [];
  let next = 0;
  let bytes = 0;
  const cost = (key: string, body: Buffer) => body.length + key.length + ENTRY_BYTES;
  return {
    /** Counts the drops: what was read before one is not kept after it. */
    generation: 0,
    get: (key: string) => held.get(key),
    keep(key: string, body: Buffer) {
      const size = cost(key, body);
      if (size > Math.min(budget, LARGEST_RENDERED) || held.has(key)) return;
      bytes += size;
      while (bytes > budget) {
        const oldest = order[next]!;
        next += 1;
        bytes -= cost(oldest, held.get(oldest)!);
        held.delete(oldest);
      }
      if (next > 1024 && next * 2 > order.length) {
        order = order.slice(next);
        next = 0;
      }
      held.set(key, body);
      order.push(key);
    },
    drop() {
      this.generation += 1;
      if (held.size === 0) return;
      held = new Map();
      order = [];
      next = 0;
      bytes = 0;
    },
  };
}

export type AccessCache = ReturnType<typeof accessCache>;
