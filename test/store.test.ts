import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { UsageError } from '../src/errors.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { factories, indexedWords, testClock } from './helpers.js';

describe('SQLite store', () => {
  let dir: string;
  let store: Store;
  let make: ReturnType<typeof factories>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'folio-store-'));
    store = openSqliteStore(join(dir, 'folio.db'));
    make = factories(store, testClock());
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates idempotently, keeping data', async () => {
    const user = await make.user();
    await store.migrate();
    await store.close();
    store = openSqliteStore(join(dir, 'folio.db'));
    make = factories(store, testClock());
    assert.equal((await store.getUser(user.id))?.email, user.email);
  });

  it('keeps all the writes of an atomic run or none, showing another connection nothing until it is done', async () => {
    const other = new Database(join(dir, 'folio.db'), { readonly: true });
    const userNamed = other.prepare('SELECT count(*) FROM users WHERE email = ?').pluck();
    const documentsOf = other.prepare('SELECT count(*) FROM documents WHERE creator_id = ?').pluck();
    try {
      const write = async (email: string, midway: () => void) => {
        const user = await make.user({ email });
        const viewer = { userId: user.id, orgId: null };
        await store.createDocument(viewer, { title: 'First', contentMarkdown: 'atomicword one', projectId: null, threadId: null }, '2026-01-01T00:00:00.000Z');
        midway();
        await store.createDocument(viewer, { title: 'Second', contentMarkdown: 'atomicword two', projectId: null, threadId: null }, '2026-01-01T00:00:01.000Z');
        return user;
      };
      await assert.rejects(
        store.atomically(() =>
          write('undone@example.com', () => {
            throw new Error('stopped');
          }),
        ),
        /stopped/,
      );
      assert.equal(userNamed.get('undone@example.com'), 0);
      assert.doesNotMatch(indexedWords(join(dir, 'folio.db')), /\batomicword\b/, 'the search index undone too');
      let seenMidway: number | undefined;
      const user = await store.atomically(() => write('kept@example.com', () => (seenMidway = userNamed.get('kept@example.com') as number)));
      assert.equal(seenMidway, 0, 'nothing shown before the end');
      assert.equal(userNamed.get('kept@example.com'), 1);
      assert.equal(documentsOf.get(user.id), 2);
      const found = await store.listDocuments({ userId: user.id, orgId: null }, { limit: 10, terms: ['atomicword'] });
      assert.equal(found.length, 2);
    } finally {
      other.close();
    }
  });

  it('refuses a second user with the same e-mail, whatever its case', async () => {
    await make.user({ email: 'same@example.com' });
    await assert.rejects(make.user({ email: 'SAME@example.com' }), (err: unknown) => err instanceof UsageError && /already exists/.test(err.message));
  });

  it('adds a member once and removes them once', async () => {
    const user = await make.user();
    const org = await make.org();
    assert.equal(await store.addMember(org.id, user.id, '2026-01-01T00:00:00.000Z'), true);
    assert.equal(await store.addMember(org.id, user.id, '2026-01-01T00:00:00.000Z'), false);
    assert.equal(await store.isMember(org.id, user.id), true);
    assert.equal(await store.removeMember(org.id, user.id), true);
    assert.equal(await store.removeMember(org.id, user.id), false);
    assert.equal(await store.isMember(org.id, user.id), false);
  });

  it('keeps the first revocation time of a key', async () => {
    const user = await make.user();
    const { record } = await make.key(user.id);
    const first = await store.revokeKey(record.id, '2026-01-01T00:00:00.000Z');
    const second = await store.revokeKey(record.id, '2026-02-01T00:00:00.000Z');
    assert.equal(first?.revokedAt, '2026-01-01T00:00:00.000Z');
    assert.equal(second?.revokedAt, '2026-01-01T00:00:00.000Z');
    assert.equal(await store.revokeKey('key_unknown', '2026-01-01T00:00:00.000Z'), null);
  });

  it('keeps at most one default template per workspace', async () => {
    const user = await make.user();
    const a = await make.template({ workspaceId: user.id, creatorId: user.id, isDefault: true });
    const b = await make.template({ workspaceId: user.id, creatorId: user.id, isDefault: true });
    const sys = await make.template({ isDefault: true });
    const rows = await store.listTemplates({ userId: user.id, orgId: null }, true, 100);
    const defaults = rows.filter((r) => r.isDefault).map((r) => r.id);
    assert.deepEqual(defaults.sort(), [b.id, sys.id].sort());
    assert.ok(rows.some((r) => r.id === a.id && !r.isDefault));
  });

  it('keeps the search index exact when writes to one document share a group transaction', async () => {
    const user = await make.user();
    const viewer = { userId: user.id, orgId: null };
    const search = async (word: string) => (await store.listDocuments(viewer, { limit: 20, terms: [word] })).map((d) => d.id);
    const doc = await store.createDocument(viewer, { title: 'Ledger', contentMarkdown: 'firstversionword', projectId: null, threadId: null }, '2026-03-01T00:00:00.000Z');
    assert.ok(doc);
    // Issued together, so they run in one transaction: the second expects the time the first writes.
    const first = '2026-03-02T00:00:00.000Z';
    const outcomes = await Promise.all([
      store.updateDocument(viewer, doc.id, { contentMarkdown: 'secondversionword', expectedUpdatedAt: null }, () => first),
      store.updateDocument(viewer, doc.id, { contentMarkdown: 'thirdversionword', expectedUpdatedAt: first, title: 'Ledger final' }, () => '2026-03-03T00:00:00.000Z'),
      store.updateDocument(viewer, doc.id, { contentMarkdown: 'loserversionword', expectedUpdatedAt: null }, () => '2026-03-04T00:00:00.000Z'),
      store.createDocument(viewer, { title: 'Other', contentMarkdown: 'othernoteword', projectId: null, threadId: null }, '2026-03-02T12:00:00.000Z'),
    ]);
    assert.deepEqual(outcomes.slice(0, 3).map((o) => (o as { status: string }).status), ['updated', 'updated', 'conflict']);
    assert.deepEqual(await search('firstversionword'), []);
    assert.deepEqual(await search('secondversionword'), []);
    assert.deepEqual(await search('loserversionword'), []);
    assert.deepEqual(await search('thirdversionword'), [doc.id]);
    assert.deepEqual(await search('final'), [doc.id]);
    assert.deepEqual(await search('othernoteword'), [(outcomes[3] as { id: string }).id]);
    assert.equal((await store.getDocument(viewer, doc.id))?.contentMarkdown, 'thirdversionword');
    // The index and the documents agree row for row.
    const next = await store.updateDocument(viewer, doc.id, { contentMarkdown: 'fourthversionword', expectedUpdatedAt: '2026-03-03T00:00:00.000Z' }, () => '2026-03-05T00:00:00.000Z');
    assert.equal(next.status, 'updated');
    assert.deepEqual(await search('thirdversionword'), []);
    assert.deepEqual(await search('fourthversionword'), [doc.id]);
    // Each edit removed the words of the text it replaced from the index: a
    // search could not tell, since the entries left would name the
    // document's earlier place (its seq), which no row holds any more.
    const words = indexedWords(join(dir, 'folio.db')).split(' ');
    for (const gone of ['firstversionword', 'secondversionword', 'thirdversionword', 'loserversionword']) assert.ok(!words.includes(gone), gone);
    assert.deepEqual(words.filter((w) => w === 'fourthversionword' || w === 'othernoteword'), ['fourthversionword', 'othernoteword']);
  });

  it('answers a write only once it is committed, with reads in the same turn', async () => {
    const user = await make.user();
    const viewer = { userId: user.id, orgId: null };
    const other = new Database(join(dir, 'folio.db'), { readonly: true });
    try {
      // The write's group is queued first, then a read in the same turn: the
      // write is answered once another connection sees it.
      const written = store.createDocument(viewer, { title: 'Durable', contentMarkdown: 'x', projectId: null, threadId: null }, '2026-03-10T00:00:00.000Z');
      await store.listDocuments(viewer, { limit: 20 });
      const doc = await written;
      assert.ok(doc);
      assert.equal(other.prepare('SELECT count(*) FROM documents WHERE id = ?').pluck().get(doc.id), 1, 'committed, seen by another connection');
    } finally {
      other.close();
    }
  });
});
