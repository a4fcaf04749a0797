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
 */
export function accessCache(
  db: Db,
  options: { header?: WalIndexHeader | null; maxEntries?: number; snapshot?: ReadSnapshot } = {},
) {
  const { header = null, maxEntries = 10_000, snapshot = NO_SNAPSHOT } = options;
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  let seen = dataVersion.get();
  let entries = new Map<string, unknown>();
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
    invalidate() {
      entries = new Map();
    },
  };
}

export type AccessCache = ReturnType<typeof accessCache>;
