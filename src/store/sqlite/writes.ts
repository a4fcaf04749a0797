import type { Db } from './database.js';
import { groupCommit } from './group-commit.js';
import { searchIndexWriter } from './search-index.js';

/**
 * The store's writes: each runs in the next group transaction
 * (group-commit.ts), and the search index changes it holds
 * (search-index.ts) are written just before that transaction commits, or
 * dropped with the write if it throws.
 */
export function storeWrites(db: Db) {
  const index = searchIndexWriter(db);
  const commits = groupCommit(db, {
    beforeCommit: () => index.apply(),
    // The batch's index changes belong to writes that are no longer there.
    afterRollback: () => index.dropSince(0),
  });
  return {
    index,
    /** Runs `fn` in the next group transaction; resolves once that transaction has committed. */
    write<T>(fn: () => T): Promise<T> {
      return commits.write(() => {
        const mark = index.mark();
        try {
          return fn();
        } catch (error) {
          index.dropSince(mark);
          throw error;
        }
      });
    },
    /** Fails the writes still queued and takes no more. */
    close: () => commits.close(),
  };
}

export type StoreWrites = ReturnType<typeof storeWrites>;
