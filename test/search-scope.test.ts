import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { factories, testClock } from './helpers.js';
import { migrate, openDatabase, type Db } from '../src/store/sqlite/database.js';
import { sqliteStoreOn } from '../src/store/sqlite/store.js';
import { accessCache } from '../src/store/sqlite/access-cache.js';
import { scopeTokens, workspaceToken } from '../src/store/sqlite/search.js';
import { MAX_SCOPE_TOKENS, viewerScopes } from '../src/store/sqlite/viewer-scope.js';
import type { Store, Viewer } from '../src/store/store.js';

/**
 * A search in a scope that holds every document (a single user's
 * workspace, a team that owns everything) goes without scope tokens
 * (src/store/sqlite/documents.ts). Each world here has a database of its
 * own, since any document of another workspace changes the answer.
 */

/** Whether the viewer's scope, read afresh, holds every document. */
const holdsEverything = (db: Db, viewer: Viewer) => viewerScopes(db, accessCache(db))(viewer)?.heldEverything;

/**
 * Indexes a document again without its scope tokens, so that only a search
 * that goes without tokens finds it: the way to tell, from outside, which
 * kind of search the store ran.
 */
function dropScopeTokens(db: Db, id: string) {
  const r = db
    .prepare(
      `SELECT d.seq, d.title, d.workspace_id AS workspace, d.project_id AS project, c.content
       FROM documents d JOIN document_contents c ON c.seq = d.seq WHERE d.id = ?`,
    )
    .get(id) as { seq: number; title: string; workspace: string; project: string | null; content: string };
  // The index's rowid is -seq (migration 12).
  db.prepare(`INSERT INTO documents_fts (documents_fts, rowid, title, content, scope) VALUES ('delete', ?, ?, ?, ?)`).run(
    -r.seq,
    r.title,
    r.content,
    scopeTokens(r.workspace, r.project),
  );
  db.prepare(`INSERT INTO documents_fts (rowid, title, content, scope) VALUES (?, ?, ?, '')`).run(-r.seq, r.title, r.content);
}

async function withStore(body: (ctx: { db: Db; store: Store; make: ReturnType<typeof factories> }) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'folio-scope-'));
  const db = openDatabase(join(dir, 'folio.db'));
  migrate(db);
  const store = sqliteStoreOn(db);
  try {
    await body({ db, store, make: factories(store, testClock()) });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const search = async (store: Store, viewer: Viewer, word: string) =>
  (await store.listDocuments(viewer, { terms: [word], limit: 100 })).map((d) => d.id).sort();

describe('a scope that holds every document', () => {
  it('is a lone user\'s personal workspace, own projects included, until another workspace has a document', async () => {
    await withStore(async ({ db, make }) => {
      const solo = await make.user();
      const me: Viewer = { userId: solo.id, orgId: null };
      assert.equal(holdsEverything(db, me), true, 'an empty database');
      const project = await make.project(solo.id);
      await make.document(solo.id, { content: 'alpha' });
      await make.document(solo.id, { projectId: project.id, content: 'alpha' });
      assert.equal(holdsEverything(db, me), true, 'only the user\'s own documents');

      const other = await make.user();
      assert.equal(holdsEverything(db, me), true, 'another user with no documents');
      assert.equal(holdsEverything(db, { userId: other.id, orgId: null }), false, 'the other user sees none of them');

      await make.document(other.id, { content: 'alpha' });
      assert.equal(holdsEverything(db, me), false, 'another user\'s document');
    });
  });

  it('is a team that owns every document and whose projects the caller all sees', async () => {
    await withStore(async ({ db, make }) => {
      const ana = await make.user();
      const ben = await make.user();
      const team = await make.org({ members: [ana.id, ben.id] });
      const inTeam = (u: { id: string }): Viewer => ({ userId: u.id, orgId: team.id });
      const anas = await make.project(ana.id, { orgId: team.id, shareWith: [ben.id] });
      await make.document(ana.id, { orgId: team.id, content: 'alpha' });
      await make.document(ben.id, { orgId: team.id, projectId: anas.id, content: 'alpha' });
      assert.equal(holdsEverything(db, inTeam(ana)), true);
      assert.equal(holdsEverything(db, inTeam(ben)), true, 'a project shared with the caller');
      assert.equal(holdsEverything(db, { userId: ana.id, orgId: null }), false, 'the personal scope, beside the team\'s documents');

      // A project of the team Ana does not see, even empty: documents may come to it.
      await make.project(ben.id, { orgId: team.id });
      assert.equal(holdsEverything(db, inTeam(ana)), false, 'a team project the caller does not see');
      assert.equal(holdsEverything(db, inTeam(ben)), true, 'its creator sees it');

      await make.document(ana.id, { content: 'alpha' });
      assert.equal(holdsEverything(db, inTeam(ben)), false, 'a personal document outside the team');
    });
  });

  it('is not asked past the scope tokens a search would use', async () => {
    await withStore(async ({ db, make }) => {
      const ana = await make.user();
      const team = await make.org({ members: [ana.id] });
      for (let i = 0; i < MAX_SCOPE_TOKENS - 1; i++) await make.project(ana.id, { orgId: team.id });
      await make.document(ana.id, { orgId: team.id, content: 'alpha' });
      assert.equal(holdsEverything(db, { userId: ana.id, orgId: team.id }), true, 'the team and its projects: tokens enough');
      await make.project(ana.id, { orgId: team.id });
      // The team's token and one per project: past the limit, searches go without tokens anyway.
      assert.equal(holdsEverything(db, { userId: ana.id, orgId: team.id }), false);
    });
  });

  it('decides whether a search goes without tokens, and is asked again before each such search', async () => {
    await withStore(async ({ db, store, make }) => {
      const solo = await make.user();
      const other = await make.user();
      const me: Viewer = { userId: solo.id, orgId: null };
      const doc = await make.document(solo.id, { content: 'gamma' });
      dropScopeTokens(db, doc.id);
      assert.deepEqual(await search(store, me, 'gamma'), [doc.id], 'found by a search without tokens');
      // A document write leaves the cached scope, which held everything, in place.
      await make.document(other.id, { content: 'delta' });
      assert.deepEqual(await search(store, me, 'gamma'), [], 'another workspace has a document: tokens again');

      const ana = await make.user();
      const ben = await make.user();
      const team = await make.org({ members: [ana.id, ben.id] });
      const teamDoc = await make.document(ana.id, { orgId: team.id, content: 'gamma' });
      dropScopeTokens(db, teamDoc.id);
      const anaInTeam: Viewer = { userId: ana.id, orgId: team.id };
      // Solo's and the other user's documents lie outside the team.
      assert.deepEqual(await search(store, anaInTeam, 'gamma'), []);
    });
  });

  it('lets a team search go without tokens only while the caller sees every project of the team', async () => {
    await withStore(async ({ db, store, make }) => {
      const ana = await make.user();
      const ben = await make.user();
      const team = await make.org({ members: [ana.id, ben.id] });
      const anas = await make.project(ana.id, { orgId: team.id });
      const doc = await make.document(ana.id, { orgId: team.id, projectId: anas.id, content: 'gamma' });
      dropScopeTokens(db, doc.id);
      const anaInTeam: Viewer = { userId: ana.id, orgId: team.id };
      assert.deepEqual(await search(store, anaInTeam, 'gamma'), [doc.id]);
      await make.project(ben.id, { orgId: team.id });
      assert.deepEqual(await search(store, anaInTeam, 'gamma'), [], 'a project of Ben\'s that Ana does not see');
    });
  });

  it('searches find exactly the visible documents before and after another workspace gets documents', async () => {
    await withStore(async ({ store, make }) => {
      const solo = await make.user();
      const other = await make.user();
      const team = await make.org({ members: [other.id] });
      const me: Viewer = { userId: solo.id, orgId: null };
      const mine = [
        (await make.document(solo.id, { content: 'alpha one' })).id,
        (await make.document(solo.id, { content: 'alpha two' })).id,
      ];
      await make.document(solo.id, { content: 'beta' });
      // The first search caches the scope while it holds everything; documents
      // written afterwards do not drop the cache, so the next searches ask again.
      assert.deepEqual(await search(store, me, 'alpha'), mine.sort());

      const theirs = (await make.document(other.id, { content: 'alpha three' })).id;
      const teams = (await make.document(other.id, { orgId: team.id, content: 'alpha four' })).id;
      assert.deepEqual(await search(store, me, 'alpha'), mine.sort(), 'the other user\'s documents stay out');
      assert.deepEqual(await search(store, { userId: other.id, orgId: null }, 'alpha'), [theirs]);
      assert.deepEqual(await search(store, { userId: other.id, orgId: team.id }, 'alpha'), [teams]);
      assert.deepEqual(await search(store, { userId: solo.id, orgId: team.id }, 'alpha'), [], 'not a member');
    });
  });
});

describe('scope tokens', () => {
  it('cannot be written by a document: the text of another workspace\'s token does not put a document in it', async () => {
    await withStore(async ({ db, make }) => {
      const forger = await make.user();
      const owner = await make.user();
      const forged = await make.document(forger.id, { title: 'Forged', content: `${workspaceToken(owner.id)} alpha` });
      const owned = await make.document(owner.id, { content: 'alpha' });
      const seqOf = db.prepare('SELECT seq FROM documents WHERE id = ?').pluck();
      const carrying = db.prepare('SELECT -rowid FROM documents_fts WHERE documents_fts MATCH ? ORDER BY rowid').pluck();
      assert.deepEqual(carrying.all(`"${workspaceToken(owner.id)}"`), [seqOf.get(owned.id)]);
      assert.deepEqual(carrying.all(`"${workspaceToken(forger.id)}"`), [seqOf.get(forged.id)]);
    });
  });
});
