import type { Db } from './database.js';

/**
 * Merging the search index while the database is quiet.
 *
 * Each write transaction merges a few index pages (search-index.ts), FTS5's
 * way: a level is merged once it holds eight segments (migration 8). That
 * keeps writes cheap but leaves up to seven segments on every level, and a
 * search reads every one of them. Once no write has come for a while, the
 * background thread (checkpoint-worker.ts) merges further in small steps,
 * down to one segment a level, so that the searches of a quiet server, or
 * of one that mostly reads, run on a merged index. It stops as soon as
 * writes come again: each step is a transaction of its own, and a step that
 * finds the database locked is skipped.
 *
 * A step sets FTS5's `usermerge` (the number of segments a level needs to
 * be merged) to 2 for its own merge and puts it back before committing, so
 * the writes' merging is unchanged. Merging a level that holds two segments,
 * not all segments at once (FTS5's `optimize`), leaves the large old
 * segments alone when a few small new ones arrive.
 */
export const TIDYING = {
  /** Quiet time before merging starts: no commit from another connection for this long. */
  idleMs: 2000,
  /** Index pages per step, so that one step holds the write lock only briefly. */
  pages: 100,
  /** Time from one step to the next, so that a quiet server's core spends about a tenth of its time merging. */
  everyMs: 100,
} as const;

/** One step of merging on `db`, in a transaction of its own; it returns whether there was anything to merge. */
export function tidyingStep(db: Db, pages: number = TIDYING.pages): () => boolean {
  const usermerge = db.prepare(`SELECT v FROM documents_fts_config WHERE k = 'usermerge'`).pluck();
  // FTS5's rank of a command is read as an integer only: a JS number binds as a REAL.
  const setUsermerge = db.prepare(`INSERT INTO documents_fts (documents_fts, rank) VALUES ('usermerge', ?)`);
  const merge = db.prepare(`INSERT INTO documents_fts (documents_fts, rank) VALUES ('merge', ?)`);
  const totalChanges = db.prepare('SELECT total_changes()').pluck();
  const step = db.transaction((): boolean => {
    // The writes' own threshold, set by migration 8.
    const previous = BigInt(usermerge.get() as number);
    setUsermerge.run(2n);
    const before = totalChanges.get() as number;
    merge.run(BigInt(pages));
    // FTS5's documented test: the command itself counts one change; merging writes more.
    const worked = (totalChanges.get() as number) - before >= 2;
    setUsermerge.run(previous);
    return worked;
  });
  return () => step.immediate();
}

/**
 * Merges the whole index down to one segment a level, step by step, on this
 * connection (the bulk loader, after loading: the data set is then as a
 * quiet server leaves it). Returns the number of steps that did work.
 */
export function tidySearchIndex(db: Db, pages: number = TIDYING.pages): number {
  const step = tidyingStep(db, pages);
  let steps = 0;
  while (step()) steps++;
  return steps;
}
