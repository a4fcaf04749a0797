import type { Db } from './database.js';

/**
 * Merging the search index while the database is quiet.
 *
 * Each write transaction merges a few index pages (`mergePages` in
 * documents.ts), FTS5's way: a level is merged once it holds eight segments
 * (migration 8). That keeps writes cheap but leaves up to seven segments on
 * every level, and a search reads every one of them: after 6,000 edits at
 * 100,000 documents, merging down to one segment a level made searches
 * 6-20 % faster, and a fully merged index (FTS5's `optimize`) had halved
 * them (bench/README.md).
 * Once no write has come for a while, the background thread
 * (checkpointer.ts) merges further in small steps, down to one segment a
 * level, so that the searches of a quiet server, or of one that mostly
 * reads, run on the merged index. It stops as soon as writes come again:
 * merging is only ever done by one connection at a time, each step in a
 * transaction of its own, and a step that finds the database locked is
 * simply skipped.
 *
 * A step sets FTS5's merge thresholds (TIDYING_THRESHOLDS) for its own
 * merge and puts them back before committing, so the writes' merging is
 * unchanged. Merging a level that holds two segments, not all segments at
 * once (FTS5's `optimize`), leaves the large old segments alone when a few
 * small new ones arrive, until a tenth of a segment's rows are deleted
 * (edited documents leave their old entries deleted where they are:
 * migration 10); the segment is then rewritten without them.
 */
export const TIDYING = {
  /** Quiet time before merging starts: no commit from another connection for this long. */
  idleMs: 2000,
  /** Index pages per step: about 10 ms each, at most a few hundred for a very long list of one word. */
  pages: 100,
  /** Time from one step to the next, so that a quiet server's core spends about a tenth of its time merging. */
  everyMs: 100,
} as const;

/**
 * FTS5's merge thresholds during a step: a level is merged once it holds two
 * segments (the writes' threshold is eight: migration 8), and a segment once
 * a tenth of its rows are deleted (FTS5's default; the writes' is never:
 * migration 10).
 */
export const TIDYING_THRESHOLDS = { usermerge: 2n, deletemerge: 10n } as const;

/** The statements of one step, as SQL text: the background thread prepares them on its own connection. */
export const TIDYING_SQL = {
  threshold: `SELECT v FROM documents_fts_config WHERE k = ?`,
  setThreshold: `INSERT INTO documents_fts (documents_fts, rank) VALUES (?, ?)`,
  merge: `INSERT INTO documents_fts (documents_fts, rank) VALUES ('merge', ?)`,
  totalChanges: 'SELECT total_changes()',
} as const;

/**
 * Merges the whole index down to one segment a level, step by step, on this
 * connection (the bulk loader, after loading: the data set is then as a
 * quiet server leaves it). Returns the number of steps that did work.
 */
export function tidySearchIndex(db: Db, pages: number = TIDYING.pages): number {
  const threshold = db.prepare(TIDYING_SQL.threshold).pluck();
  const setThreshold = db.prepare(TIDYING_SQL.setThreshold);
  const merge = db.prepare(TIDYING_SQL.merge);
  const totalChanges = db.prepare(TIDYING_SQL.totalChanges).pluck();
  // FTS5's rank of a command is read as an integer only: a JS number binds as a REAL.
  const step = db.transaction((): boolean => {
    const names = Object.keys(TIDYING_THRESHOLDS) as (keyof typeof TIDYING_THRESHOLDS)[];
    // The writes' own thresholds, set by migrations 8 and 10.
    const previous = names.map((k) => BigInt(threshold.get(k) as number));
    for (const k of names) setThreshold.run(k, TIDYING_THRESHOLDS[k]);
    const before = totalChanges.get() as number;
    merge.run(BigInt(pages));
    // FTS5's documented test: the command itself counts one change; merging writes more.
    const worked = (totalChanges.get() as number) - before >= 2;
    names.forEach((k, i) => setThreshold.run(k, previous[i]));
    return worked;
  });
  let steps = 0;
  while (step.immediate()) steps++;
  return steps;
}
