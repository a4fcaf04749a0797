import { isUtf8 } from 'node:buffer';
import type {
  DocumentMutationRow,
  DocumentPageQuery,
  DocumentReplacement,
  DocumentSummaryRow,
  ListDocumentsQuery,
  NewDocument,
  UpdateOutcome,
  Viewer,
} from '../store.js';
import type { Db } from './database.js';
import { ftsMatch, projectToken, scopeTokens, wholeWords, withinScope } from './search.js';
import { branchShape, contentVisible, listBranches, projectVisible, type ScopeKind } from './visibility.js';
import { everythingInScope, kindOf, MAX_SCOPE_TOKENS, viewerParams as params, viewerScopes } from './viewer-scope.js';
import { newUuid } from '../../domain/ids.js';
import { searchText } from '../../domain/search.js';
import { groupCommit } from './group-commit.js';
import type { AccessCache } from './access-cache.js';
import { NO_SNAPSHOT, type ReadSnapshot } from './read-snapshot.js';
import type { WalIndexHeader } from './wal-index-header.js';
import { listPageSql } from './page-limit.js';

/**
 * Lists and searches read rows in raw mode, as arrays in the column order
 * of their SELECT: better-sqlite3 builds those faster than row objects.
 */
type SummaryTuple = [id: string, title: string, createdAt: string, updatedAt: string | null, threadId: string | null];
/** A search row: the summary, then its sort time and high-water time. */
type WalkedTuple = [...SummaryTuple, sortAt: string, highWaterAt: string];
const SORT_AT = 5;
const HIGH_WATER_AT = 6;

function tupleSummary(r: SummaryTuple | WalkedTuple): DocumentSummaryRow {
  return { id: r[0], title: r[1], createdAt: r[2], updatedAt: r[3], threadId: r[4] };
}

/** DESIGN §3: coalesce(updatedAt, createdAt) newest first, ties by id (descending). */
const newestFirst = (a: WalkedTuple, b: WalkedTuple) =>
  a[SORT_AT] !== b[SORT_AT] ? (a[SORT_AT] < b[SORT_AT] ? 1 : -1) : a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0;

/** Documents: list and search, read, create, and atomic compare-and-replace. */
export function documentQueries(db: Db, cache: AccessCache, header: WalIndexHeader | null = null, snapshot: ReadSnapshot = NO_SNAPSHOT) {
  const index = searchIndexWriter(db);
  const whole = wholeWords(db, header, snapshot);
  const writes = groupCommit(db, {
    beforeBegin: snapshot.release,
    beforeCommit: () => {
      index.apply();
      whole.changed();
    },
    // The batch's index changes belong to writes that are no longer there.
    afterRollback: () => index.dropSince(0),
  });
  /** A document write in the next group transaction; if it throws, its search index changes are dropped with it. */
  function write<T>(fn: () => T): Promise<T> {
    return writes.write(() => {
      const mark = index.mark();
      try {
        return fn();
      } catch (error) {
        index.dropSince(mark);
        throw error;
      }
    });
  }
  const listCache = new Map<string, ReturnType<Db['prepare']>>();

  /** The statement of a page (documentPageSql), prepared once per shape. */
  function listStatement(kind: ScopeKind, project: boolean, shared: number, rendered: boolean) {
    const key = `${kind}:${project}:${branchShape(kind, shared)}:${rendered}`;
    let stmt = listCache.get(key);
    if (!stmt) {
      const sql = documentPageSql(kind, project, shared, rendered);
      stmt = rendered ? db.prepare(sql).pluck() : db.prepare(sql).raw();
      listCache.set(key, stmt);
    }
    return stmt;
  }
  /** The statement and parameters of a viewer's page (rendered as JSON with `urls`), or null for a team the viewer is not a member of. */
  function page(viewer: Viewer, query: DocumentPageQuery, urls: string | null) {
    const scope = scopeOf(viewer);
    if (scope === null) return null;
    return {
      stmt: listStatement(kindOf(viewer), query.projectId !== undefined, scope.shared, urls !== null),
      bound: params(viewer, { pid: query.projectId ?? null, projects: scope.projects, limit: query.limit, urls }),
    };
  }

  // Search walks the index in ascending rowid order (-seq: newest write
  // first), joined with the visibility rules, and stops once the page is
  // full (see search()).
  const searchCache = new Map<string, ReturnType<Db['prepare']>>();
  function searchStatement(kind: ScopeKind, project: boolean) {
    const key = `${kind}:${project}`;
    let stmt = searchCache.get(key);
    if (!stmt) {
      stmt = db.prepare(
        `SELECT d.id, d.title, d.created_at, d.updated_at, d.thread_id, d.sort_at, d.high_water_at
         FROM documents_fts f JOIN documents d ON d.seq = -f.rowid
         WHERE f.documents_fts MATCH @match AND ${contentVisible[kind]('d')}${project ? ' AND d.project_id = @pid' : ''}
         ORDER BY f.rowid`,
      ).raw();
      searchCache.set(key, stmt);
    }
    return stmt;
  }
  const holdsEverything = everythingInScope(db);
  const scopeOf = viewerScopes(db, cache, holdsEverything);

  const renderStmt = {
    personal: db.prepare(documentJson(contentVisible.personal('d'))).pluck(),
    org: db.prepare(documentJson(contentVisible.org('d'))).pluck(),
  };
  const lockStmt = {
    personal: db.prepare(lockSelect(contentVisible.personal('d'))),
    org: db.prepare(lockSelect(contentVisible.org('d'))),
  };
  const projectWorkspace = {
    personal: db.prepare(`SELECT p.workspace_id FROM projects p WHERE p.id = @pid AND ${projectVisible.personal('p')}`),
    org: db.prepare(`SELECT p.workspace_id FROM projects p WHERE p.id = @pid AND ${projectVisible.org('p')}`),
  };
  const memberStmt = db.prepare('SELECT 1 FROM memberships WHERE org_id = @oid AND user_id = @uid');
  const lastWritten = db.prepare('SELECT seq, high_water_at FROM documents ORDER BY seq DESC LIMIT 1');
  const insertStmt = db.prepare(
    `INSERT INTO documents (seq, id, workspace_id, creator_id, project_id, thread_id, title, created_at, sort_at, high_water_at)
     VALUES (@seq, @id, @workspace, @uid, @pid, @thread, @title, @now, @now, @highWater)`,
  );
  const insertContent = db.prepare('INSERT INTO document_contents (seq, content) VALUES (@seq, @content)');
  const contentOf = db.prepare('SELECT content FROM document_contents WHERE seq = ?').pluck();
  const moveStmt = db.prepare(
    `UPDATE documents SET seq = @next, title = @title, updated_at = @updatedAt, sort_at = @updatedAt, high_water_at = @highWater
     WHERE seq = @seq RETURNING id, title, thread_id, updated_at`,
  );
  const moveContent = db.prepare('UPDATE document_contents SET seq = @next, content = @content WHERE seq = @seq');

  /** The seq and high-water time of a document written now with this sort time (see migrations.ts). */
  function nextPlace(sortAt: string): { seq: number; highWater: string } {
    const last = lastWritten.get() as { seq: number; high_water_at: string } | undefined;
    if (!last) return { seq: 1, highWater: sortAt };
    return { seq: last.seq + 1, highWater: last.high_water_at > sortAt ? last.high_water_at : sortAt };
  }

  const create = db.transaction((viewer: Viewer, doc: NewDocument, now: string): DocumentMutationRow | null => {
    const kind = kindOf(viewer);
    let workspace: string;
    if (doc.projectId !== null) {
      const row = projectWorkspace[kind].get(params(viewer, { pid: doc.projectId })) as
        | { workspace_id: string }
        | undefined;
      if (!row) return null;
      workspace = row.workspace_id;
    } else if (viewer.orgId !== null) {
      if (!memberStmt.get(params(viewer))) return null;
      workspace = viewer.orgId;
    } else {
      workspace = viewer.userId;
    }
    const id = newUuid();
    const { seq, highWater } = nextPlace(now);
    insertStmt.run({
      seq,
      highWater,
      id,
      workspace,
      uid: viewer.userId,
      pid: doc.projectId,
      thread: doc.threadId,
      title: doc.title,
      now,
    });
    insertContent.run({ seq, content: doc.contentMarkdown });
    index.insert({ seq, title: doc.title, content: doc.contentMarkdown, scope: scopeTokens(workspace, doc.projectId) });
    return { id, title: doc.title, threadId: doc.threadId, updatedAt: null };
  });

  const update = db.transaction(
    (
      viewer: Viewer,
      id: string,
      change: DocumentReplacement,
      next: (previous: string | null) => string,
    ): UpdateOutcome => {
      const row = lockStmt[kindOf(viewer)].get(params(viewer, { id })) as
        | { seq: number; updated_at: string | null; title: string; workspace_id: string; project_id: string | null }
        | undefined;
      if (!row) return { status: 'not_found' };
      if (row.updated_at !== change.expectedUpdatedAt) return { status: 'conflict', currentUpdatedAt: row.updated_at };
      const updatedAt = next(row.updated_at);
      const title = change.title ?? row.title;
      const { seq, highWater } = nextPlace(updatedAt);
      const updated = moveStmt.get({ seq: row.seq, next: seq, title, updatedAt, highWater }) as {
        id: string;
        title: string;
        thread_id: string | null;
        updated_at: string;
      };
      const scope = scopeTokens(row.workspace_id, row.project_id);
      index.remove({ seq: row.seq, title: row.title, content: contentOf.get(row.seq) as string, scope });
      moveContent.run({ seq: row.seq, next: seq, content: change.contentMarkdown });
      index.insert({ seq, title, content: change.contentMarkdown, scope });
      return {
        status: 'updated',
        document: { id: updated.id, title: updated.title, threadId: updated.thread_id, updatedAt: updated.updated_at },
      };
    },
  );

  /**
   * Search: matches come from the index by seq descending (newest writes first),
   * restricted to the caller's scope tokens (none for a scope that holds
   * every document: everythingInScope) and checked against the visibility
   * rules. The walk keeps every row until no row still to come
   * can be among the first `limit`: once `limit` rows are in, it stops at a
   * row whose high-water time is older than the limit-th newest sort time
   * seen. Ties and a clock that went back are then put right by sorting
   * exactly as DESIGN §3 says. It runs in one read transaction, so that the
   * index's vocabulary that wholeWords reads is the index searched.
   */
  const search = db.transaction(
    (viewer: Viewer, terms: string[], projectId: string | undefined, limit: number): WalkedTuple[] => {
      const kind = kindOf(viewer);
      const scope = projectId !== undefined ? undefined : scopeOf(viewer);
      if (scope === null) return [];
      const tokens = scope === undefined ? [projectToken(projectId!)] : scope.tokens;
      const fts = ftsMatch(terms, whole.of(terms));
      // Asked again in this transaction: the cached answer may be older than another user's first document.
      const everything = scope !== undefined && scope.heldEverything && holdsEverything(viewer, tokens.length - 1);
      const match = tokens.length <= MAX_SCOPE_TOKENS && !everything ? withinScope(fts, tokens) : fts;
      const rows: WalkedTuple[] = [];
      // The `limit` newest sort times seen, newest first.
      const newest: string[] = [];
      const matches = searchStatement(kind, projectId !== undefined).iterate(
        params(viewer, { pid: projectId ?? null, match }),
      ) as Iterable<WalkedTuple>;
      for (const r of matches) {
        rows.push(r);
        const sortAt = r[SORT_AT];
        if (newest.length < limit || sortAt > newest[limit - 1]!) {
          let i = Math.min(newest.length, limit - 1);
          while (i > 0 && newest[i - 1]! < sortAt) i--;
          newest.splice(i, 0, sortAt);
          if (newest.length > limit) newest.pop();
        }
        if (newest.length === limit && r[HIGH_WATER_AT] < newest[limit - 1]!) break;
      }
      return rows.sort(newestFirst).slice(0, limit);
    },
  );

  return {
    /** Fails the writes still queued (waiting for another process's lock) and stops taking new ones. */
    closeWrites: () => writes.close(),

    listDocuments(viewer: Viewer, query: ListDocumentsQuery): DocumentSummaryRow[] {
      const terms = query.terms ?? [];
      if (terms.length > 0) return snapshot.within(() => search(viewer, terms, query.projectId, query.limit)).map(tupleSummary);
      const p = page(viewer, query, null);
      return p === null ? [] : (p.stmt.all(p.bound) as SummaryTuple[]).map(tupleSummary);
    },

    renderDocumentPage(viewer: Viewer, query: DocumentPageQuery, urls: string): Buffer {
      return cache.rendered(renderedKey('page', viewer, urls, `${query.limit}\n${query.projectId ?? ''}`), () => {
        const p = page(viewer, query, urls);
        return p === null ? ownBytes(EMPTY_PAGE) : asUtf8(p.stmt.get(p.bound) as Buffer);
      });
    },

    renderDocument(viewer: Viewer, id: string, urls: string): Buffer | null {
      return cache.rendered(renderedKey('document', viewer, urls, id), () => {
        const found = renderStmt[kindOf(viewer)].get(params(viewer, { id, urls })) as Buffer | undefined;
        return found === undefined ? null : asUtf8(found);
      });
    },

    createDocument(viewer: Viewer, doc: NewDocument, now: string) {
      return write(() => create(viewer, doc, now));
    },

    async updateDocument(
      viewer: Viewer,
      id: string,
      change: DocumentReplacement,
      next: (previous: string | null) => string,
    ) {
      return write(() => update(viewer, id, change, next));
    },
  };
}

/**
 * Reads answer in JSON that SQLite writes (renderDocument,
 * renderDocumentPage): the same bytes as the route's response schema would
 * serialize (test/rendered-json.test.ts holds them to it, field for field),
 * without first making a JavaScript string of every column and an object
 * of every row, which took more of a page's time than its SQL. `@urls` is
 * the start of a document's url.
 */
const SUMMARY_JSON = (d: string) =>
  `'id', ${d}.id, 'title', ${d}.title, 'createdAt', ${d}.created_at, 'updatedAt', ${d}.updated_at, 'threadId', ${d}.thread_id, 'url', @urls || ${d}.id`;

/**
 * A page of documents in a scope with `shared` projects beyond its
 * workspace (listBranches), of one project (`project`, bound as @pid) or of
 * all: each row's summary, or the page's JSON (`rendered`).
 */
export function documentPageSql(kind: ScopeKind, project: boolean, shared: number, rendered: boolean): string {
  const page = { table: 'documents', t: 'd', key: 'seq', branches: listBranches[kind]('d', shared), and: project ? ' AND d.project_id = @pid' : '' };
  return rendered
    ? // pageJson's group_concat orders the page itself.
      pageJson(listPageSql({ ...page, select: `json_object(${SUMMARY_JSON('d')}) AS summary, page.sort_at, page.id`, ordered: false }))
    : listPageSql({ ...page, select: 'd.id, d.title, d.created_at, d.updated_at, d.thread_id' });
}

/**
 * The key of a rendered response the access cache keeps while the database
 * is unchanged (access-cache.ts): what it is, the viewer (user and scope) and
 * the documents' URL prefix, then the parts the request chooses, last, so
 * that no request's parts can make another viewer's key.
 */
function renderedKey(what: 'page' | 'document', viewer: Viewer, urls: string, chosen: string): string {
  return `${what}\n${viewer.userId}\n${viewer.orgId ?? ''}\n${urls}\n${chosen}`;
}

/** A page of documents with no document in it. */
const EMPTY_PAGE = '{"documents":[],"count":0}';

/**
 * A page (`sql` selecting each document's JSON as `summary`, with the
 * page's order) as the whole body of `GET /v1/documents`, in UTF-8 bytes:
 * one value read instead of a JavaScript string of every row joined into
 * another, then encoded again to be sent.
 */
function pageJson(sql: string): string {
  return `SELECT CAST('{"documents":[' || coalesce(group_concat(summary, ',' ORDER BY sort_at DESC, id DESC), '')
            || '],"count":' || count(*) || '}' AS BLOB)
     FROM (${sql})`;
}

/**
 * JSON the store wrote, as it goes out: text that is not UTF-8 (Folio
 * refuses lone surrogates in bodies, but another tool may write anything,
 * or an older Folio stored one as its three bytes) is sent as a JavaScript
 * string of it would be, each bad sequence as U+FFFD.
 */
function asUtf8(body: Buffer): Buffer {
  return isUtf8(body) ? body : ownBytes(body.toString('utf8'));
}

/**
 * `text` in UTF-8, in memory of its own: a small Buffer.from is a slice of
 * Node's shared 8 KiB pool, which a kept response would hold whole.
 */
function ownBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

/** A document as the API shows it, as UTF-8 bytes: no string is made of the Markdown only to be written out again. */
function documentJson(visible: string): string {
  return `SELECT CAST(json_object(${SUMMARY_JSON('d')}, 'contentMarkdown', c.content,
            'project', CASE WHEN d.project_id IS NULL THEN NULL ELSE json_object('id', d.project_id, 'name', coalesce(p.name, '')) END) AS BLOB)
     FROM documents d JOIN document_contents c ON c.seq = d.seq LEFT JOIN projects p ON p.id = d.project_id
     WHERE d.id = @id AND ${visible}`;
}

function lockSelect(visible: string): string {
  return `SELECT d.seq, d.updated_at, d.title, d.workspace_id, d.project_id FROM documents d
     WHERE d.id = @id AND ${visible}`;
}

interface IndexEntry {
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
 * has eight segments or more (migration 8; FTS5's default is four), and
 * stops after this many pages; with no such level it costs nothing. About
 * three pages per change kept the index as merged as FTS5's automatic
 * merging did under creations and edits at 100,000 documents, in steps
 * small enough that no commit waits long (bench/README.md); a single
 * write's step is at least 32 pages,
 * so that a trickle of writes still merges.
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
 * write a new index segment at once, which, one per document, cost more
 * than all the rest of a write. An entry inserted and removed within the
 * same transaction is never written (removing it from the index first would
 * corrupt it).
 */
function searchIndexWriter(db: Db) {
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
