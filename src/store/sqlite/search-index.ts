import { searchText } from '../../domain/search.js';
import type { Db } from './database.js';

/** A document's entry in the search index: its text, and its scope tokens (search.ts). */
export interface IndexEntry {
  seq: number;
  title: string;
  content: string;
  scope: string;
}

/**
 * How many index pages a transaction that made `changes` changes to the
 * search index merges. FTS5 merges nothing by itself here (migration 6):
 * left alone, each commit adds a segment, and a search reads every segment.
 * A merge step continues the merge under way, or starts one at a level that
 * has eight segments or more (migration 8), and stops after this many pages;
 * with no such level it costs nothing. About three pages per change keeps
 * the index as merged as FTS5's own merging would, in steps small enough
 * that no commit waits long; a single write's step is at least 32 pages, so
 * that a trickle of writes still merges.
 */
function mergePages(changes: number): number {
  return Math.min(256, Math.max(32, 3 * changes));
}

/** An entry's text as the index reads it (searchText); a removal must give the index what its insertion gave. */
const indexed = (e: IndexEntry): IndexEntry => ({ seq: e.seq, title: searchText(e.title), content: searchText(e.content), scope: e.scope });

/**
 * Changes to the search index, held until the group transaction is about to
 * commit and then written in the index's rowid order (-seq ascending, so
 * the insertions, whose seqs are above every existing one, come first, then
 * the removals). FTS5 keeps a transaction's changes in memory only while
 * each rowid it is given is above the one before; any other order makes it
 * write a new index segment at once. An entry inserted and removed within
 * the same transaction is never written (removing it from the index first
 * would corrupt it).
 */
export function searchIndexWriter(db: Db) {
  // The index's rowid is -seq (migration 12).
  const insertStmt = db.prepare('INSERT INTO documents_fts (rowid, title, content, scope) VALUES (-@seq, @title, @content, @scope)');
  const removeStmt = db.prepare(
    `INSERT INTO documents_fts (documents_fts, rowid, title, content, scope)
     VALUES ('delete', -@seq, @title, @content, @scope)`,
  );
  // The rank of FTS5's commands is read as an integer only: a JS number binds as a REAL.
  const mergeStmt = db.prepare(`INSERT INTO documents_fts (documents_fts, rank) VALUES ('merge', ?)`);
  let pending: { op: 'insert' | 'remove'; entry: IndexEntry }[] = [];
  return {
    insert(entry: IndexEntry) {
      pending.push({ op: 'insert', entry });
    },
    remove(entry: IndexEntry) {
      pending.push({ op: 'remove', entry });
    },
    /** Where the changes held so far end: a write that fails drops what it added since (dropSince). */
    mark: () => pending.length,
    dropSince(mark: number) {
      pending.length = mark;
    },
    /** Writes the held changes; runs inside the transaction, just before COMMIT. */
    apply() {
      const changes = pending;
      pending = [];
      const inserts = new Map<number, IndexEntry>();
      const removals: IndexEntry[] = [];
      for (const { op, entry } of changes) {
        if (op === 'insert') inserts.set(entry.seq, entry);
        else if (!inserts.delete(entry.seq)) removals.push(entry);
      }
      const writes = [...inserts.values()].map((entry) => ({ entry, stmt: insertStmt }));
      for (const entry of removals) writes.push({ entry, stmt: removeStmt });
      // Ascending rowid, -seq: newest seq first.
      for (const { entry, stmt } of writes.sort((a, b) => b.entry.seq - a.entry.seq)) stmt.run(indexed(entry));
      if (changes.length > 0) mergeStmt.run(BigInt(mergePages(changes.length)));
    },
  };
}
