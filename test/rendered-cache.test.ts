import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { accessCache } from '../src/store/sqlite/access-cache.js';
import type { ReadSnapshot } from '../src/store/sqlite/read-snapshot.js';
import type { WalIndexHeader } from '../src/store/sqlite/wal-index-header.js';
import { call, setup, snapshotFixture, turnEnd, type SnapshotFixture, type TestContext } from './helpers.js';

/**
 * Folio keeps the documents and pages it rendered while the database is
 * unchanged (src/store/sqlite/access-cache.ts). A response kept for one
 * viewer is never another's, and any commit — another process's, or this
 * server's own writes — shows on the very next request.
 */

describe('rendered responses kept while the database is unchanged', () => {
  let fixture: SnapshotFixture;
  let db: Database.Database;
  let other: Database.Database;
  let header: WalIndexHeader;
  // One a connection, as the store has.
  let snapshot: ReadSnapshot;
  before(() => {
    fixture = snapshotFixture('folio-rendered-');
    ({ db, other, header, snapshot } = fixture);
  });
  afterEach(turnEnd);
  after(() => fixture.close());

  /** A render of row `a` that counts how often it ran. */
  function counted(run: () => void = () => {}) {
    const read = db.prepare("SELECT v FROM t WHERE k = 'a'").pluck();
    const render = Object.assign(
      () => {
        render.runs += 1;
        run();
        return Buffer.from(read.get() as string);
      },
      { runs: 0 },
    );
    return render;
  }

  it('renders once while nothing is committed, within a turn and across turns', async () => {
    const cache = accessCache(db, { header, snapshot });
    const render = counted();
    assert.equal(cache.rendered('k', render).toString(), '0');
    assert.equal(cache.rendered('k', render).toString(), '0');
    await turnEnd();
    assert.equal(cache.rendered('k', render).toString(), '0');
    assert.equal(render.runs, 1);
    // Another key is rendered for itself.
    assert.equal(cache.rendered('other', render).toString(), '0');
    assert.equal(render.runs, 2);
  });

  it('renders again after another connection commits, and after this one does', async () => {
    const cache = accessCache(db, { header, snapshot });
    const render = counted();
    cache.rendered('k', render);
    other.prepare("UPDATE t SET v = '1' WHERE k = 'a'").run();
    assert.equal(cache.rendered('k', render).toString(), '1');
    await turnEnd();
    db.prepare("UPDATE t SET v = '2' WHERE k = 'a'").run();
    assert.equal(cache.rendered('k', render).toString(), '2');
    assert.equal(cache.rendered('k', render).toString(), '2');
    assert.equal(render.runs, 3);
    db.prepare("UPDATE t SET v = '0' WHERE k = 'a'").run();
  });

  it('does not keep what was rendered while a commit was seen', async () => {
    const cache = accessCache(db, { header, snapshot });
    let commit = true;
    // Another process commits while the response is rendered, and a lookup inside the render sees it.
    const render = counted(() => {
      if (!commit) return;
      commit = false;
      other.prepare("UPDATE t SET v = v || '+' WHERE k = 'a'").run();
      cache.get('scope', () => 1);
    });
    cache.rendered('k', render);
    assert.equal(cache.rendered('k', render).toString(), '0+');
    assert.equal(render.runs, 2);
    await turnEnd();
    db.prepare("UPDATE t SET v = '0' WHERE k = 'a'").run();
  });

  it('does not keep what a write transaction of this connection read, which may yet be undone', async () => {
    const cache = accessCache(db, { header, snapshot });
    const render = counted();
    // The cache has seen every commit, and the turn's read transaction is over.
    cache.get('settled', () => 1);
    await turnEnd();
    const undone = new Error('undone');
    assert.throws(
      () =>
        db.transaction(() => {
          db.prepare("UPDATE t SET v = 'uncommitted' WHERE k = 'a'").run();
          assert.equal(cache.rendered('k', render).toString(), 'uncommitted');
          throw undone;
        }).immediate(),
      undone,
    );
    assert.equal(cache.rendered('k', render).toString(), '0');
    assert.equal(render.runs, 2);
  });

  it('keeps nothing when invalidated, or without a readable WAL-index header', async () => {
    const cache = accessCache(db, { header, snapshot });
    const render = counted();
    cache.rendered('k', render);
    cache.invalidate();
    cache.rendered('k', render);
    assert.equal(render.runs, 2);
    await turnEnd();
    const unreadable: WalIndexHeader = { read: () => false, mapped: false, close() {} };
    const blind = accessCache(db, { header: unreadable, snapshot });
    const again = counted();
    blind.rendered('k', again);
    blind.rendered('k', again);
    assert.equal(again.runs, 2);
  });

  it('keeps the newest within its byte budget, and nothing larger than the budget', async () => {
    // Each entry costs its body, its key and 512 bytes.
    const cache = accessCache(db, { header, snapshot, renderedBytes: 3 * (100 + 1 + 512) });
    const renders = new Map<string, number>();
    const render = (key: string, bytes: number) =>
      cache.rendered(key, () => {
        renders.set(key, (renders.get(key) ?? 0) + 1);
        return Buffer.alloc(bytes);
      });
    for (const key of ['a', 'b', 'c', 'd']) render(key, 100);
    for (const key of ['b', 'c', 'd']) render(key, 100);
    assert.deepEqual([...renders.values()], [1, 1, 1, 1], 'the last three are kept');
    render('a', 100);
    assert.equal(renders.get('a'), 2, 'the oldest went first');
    render('huge', 2000);
    render('huge', 2000);
    assert.equal(renders.get('huge'), 2, 'larger than the budget: never kept');
  });

  it('goes on keeping exactly the newest that fit after many have gone', async () => {
    const cache = accessCache(db, { header, snapshot, renderedBytes: 3 * (100 + 5 + 512) });
    let runs = 0;
    const render = (key: string) =>
      cache.rendered(key, () => {
        runs += 1;
        return Buffer.alloc(100);
      });
    // Keys of five characters; enough of them that the order of keeping is compacted several times.
    const keys = Array.from({ length: 5000 }, (_, i) => `k${String(i).padStart(4, '0')}`);
    for (const key of keys) render(key);
    assert.equal(runs, 5000);
    for (const key of keys.slice(-3)) render(key);
    assert.equal(runs, 5000, 'the last three are still kept');
    render(keys[keys.length - 4]!);
    assert.equal(runs, 5001, 'the one before them is not');
    // Kept in its turn, it pushed out the oldest of the three, and only it.
    const [k4996, k4997, k4998, k4999] = keys.slice(-4) as [string, string, string, string];
    for (const key of [k4998, k4999, k4996]) render(key);
    assert.equal(runs, 5001);
    render(k4997);
    assert.equal(runs, 5002);
  });

  it('does not keep a render that found nothing', async () => {
    const cache = accessCache(db, { header, snapshot });
    let runs = 0;
    const missing = () =>
      cache.rendered('missing', () => {
        runs += 1;
        return null;
      });
    assert.equal(missing(), null);
    assert.equal(missing(), null);
    assert.equal(runs, 2);
  });
});

describe('documents and pages over HTTP, with rendered responses kept', () => {
  let t: TestContext;
  let other: Database.Database;
  before(async () => {
    t = await setup({ env: { READ_LIMIT_PER_MIN: '100000', WRITE_LIMIT_PER_MIN: '100000' } });
    other = new Database(join(t.dir, 'folio.db'));
    other.pragma('busy_timeout = 5000');
  });
  after(async () => {
    other.close();
    await t.close();
  });

  async function person() {
    const user = await t.make.user();
    return { user, read: (await t.make.key(user.id)).secret, write: (await t.make.key(user.id, { write: true })).secret };
  }
  const titles = async (key: string, query = '') =>
    (await call(t.app, 'GET', `/v1/documents${query}`, { key })).body.documents.map((d: { title: string }) => d.title);

  it('shows each viewer only their own page and documents, whoever asked first', async () => {
    const a = await person();
    const b = await person();
    const org = await t.make.org({ plan: 'team_yearly', members: [a.user.id] });
    const project = await t.make.project(a.user.id);
    await t.make.document(a.user.id, { title: 'A in project', projectId: project.id });
    t.clock.advance(1000);
    const mine = await t.make.document(a.user.id, { title: 'A private' });
    await t.make.document(b.user.id, { title: 'B private' });
    await t.make.document(a.user.id, { orgId: org.id, title: 'Team note' });
    const status = async (key: string, path: string) => (await call(t.app, 'GET', path, { key })).status;
    for (let round = 0; round < 2; round++) {
      assert.deepEqual(await titles(a.read), ['A private', 'A in project']);
      assert.deepEqual(await titles(b.read), ['B private']);
      assert.deepEqual(await titles(a.read, `?organizationId=${org.id}`), ['Team note']);
      assert.equal(await status(b.read, `/v1/documents?organizationId=${org.id}`), 400);
      assert.deepEqual(await titles(a.read, '?limit=1'), ['A private']);
      assert.deepEqual(await titles(a.read, `?projectId=${project.id}`), ['A in project']);
      assert.equal(await status(b.read, `/v1/documents?projectId=${project.id}`), 400);
      assert.equal(await status(a.read, `/v1/documents/${mine.id}`), 200);
      assert.equal(await status(b.read, `/v1/documents/${mine.id}`), 404);
      assert.equal(await status(a.read, `/v1/documents/${mine.id}?organizationId=${org.id}`), 404);
    }
  });

  it('shows this server’s own writes on the next request', async () => {
    const a = await person();
    const first = await t.make.document(a.user.id, { title: 'First', content: 'one' });
    const get = () => call(t.app, 'GET', `/v1/documents/${first.id}`, { key: a.read });
    const before = await get();
    assert.equal(before.body.contentMarkdown, 'one');
    assert.deepEqual(await titles(a.read), ['First']);

    const patched = await call(t.app, 'PATCH', `/v1/documents/${first.id}`, {
      key: a.write,
      body: { title: 'First, edited', contentMarkdown: 'two', expectedUpdatedAt: before.body.updatedAt },
    });
    assert.equal(patched.status, 200, patched.raw);
    assert.equal((await get()).body.contentMarkdown, 'two');
    assert.deepEqual(await titles(a.read), ['First, edited']);

    const created = await call(t.app, 'POST', '/v1/documents', { key: a.write, body: { title: 'Second', contentMarkdown: 'x' } });
    assert.equal(created.status, 201);
    assert.deepEqual((await titles(a.read)).sort(), ['First, edited', 'Second']);
  });

  it('shows changes and revocations made by another connection on the next request', async () => {
    const a = await person();
    const doc = await t.make.document(a.user.id, { title: 'Before', content: 'old text' });
    const get = () => call(t.app, 'GET', `/v1/documents/${doc.id}`, { key: a.read });
    assert.equal((await get()).body.contentMarkdown, 'old text');
    assert.deepEqual(await titles(a.read), ['Before']);

    other.prepare('UPDATE documents SET title = ? WHERE id = ?').run('After', doc.id);
    other.prepare('UPDATE document_contents SET content = ? WHERE seq = (SELECT seq FROM documents WHERE id = ?)').run('new text', doc.id);
    const after = await get();
    assert.equal(after.body.title, 'After');
    assert.equal(after.body.contentMarkdown, 'new text');
    assert.deepEqual(await titles(a.read), ['After']);

    other.prepare('UPDATE api_keys SET revoked_at = ? WHERE user_id = ?').run(new Date().toISOString(), a.user.id);
    assert.equal((await get()).status, 401);
    assert.equal((await call(t.app, 'GET', '/v1/documents', { key: a.read })).status, 401);
  });

  it('hides a team’s page and documents from a member removed by an operator command', async () => {
    const a = await person();
    const org = await t.make.org({ plan: 'team_yearly', members: [a.user.id] });
    const doc = await t.make.document(a.user.id, { orgId: org.id, title: 'Team only' });
    const page = () => call(t.app, 'GET', `/v1/documents?organizationId=${org.id}`, { key: a.read });
    const get = () => call(t.app, 'GET', `/v1/documents/${doc.id}?organizationId=${org.id}`, { key: a.read });
    assert.equal((await page()).status, 200);
    assert.equal((await get()).status, 200);
    await t.store.removeMember(org.id, a.user.id);
    assert.equal((await page()).status, 400);
    assert.equal((await get()).status, 404);
  });
});
