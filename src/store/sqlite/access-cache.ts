import type { Db } from './database.js';

/**
 * What the API looks up on every request and almost never changes — the
 * principal behind a key hash, a user's organizations, a membership, the
 * projects a viewer's searches may read (documents.ts) — kept
 * in memory only while the database is unchanged since it was read.
 *
 * Every lookup first asks SQLite's `PRAGMA data_version`, which changes as
 * soon as any other connection (another process: `folio key revoke`, `folio
 * org remove-member`, …) commits; then the whole cache is dropped. Writes
 * through this connection that can change what is cached (users, keys,
 * organizations, memberships, plans, projects, shares) call `invalidate()` (see
 * store.ts). So a revoked key or a removed member is refused on the very
 * next request, exactly as without the cache.
 */
export function accessCache(db: Db, maxEntries = 10_000) {
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  let seen = dataVersion.get();
  let entries = new Map<string, unknown>();

  return {
    get<V>(key: string, load: () => V): V {
      const version = dataVersion.get();
      if (version !== seen) {
        seen = version;
        entries = new Map();
      }
      if (entries.has(key)) return entries.get(key) as V;
      const value = load();
      if (entries.size >= maxEntries) entries = new Map();
      entries.set(key, value);
      return value;
    },
    invalidate() {
      entries = new Map();
    },
  };
}

export type AccessCache = ReturnType<typeof accessCache>;
