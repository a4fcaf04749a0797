import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import pg from 'pg';
import { foldText, SCOPE_MARK, searchTerms } from '../src/domain/search.js';
import { InvalidRequest } from '../src/errors.js';
import { migrations } from '../src/store/postgres/migrations.js';
import { SEARCH } from '../src/store/postgres/documents.js';
import { scopeQuerySql, SEARCH_WORDS, termsQuery } from '../src/store/postgres/search.js';
import { NewerSchema } from '../src/store/newer-schema.js';
import { openPostgresStore } from '../src/store/postgres/store.js';
import type { Store, Viewer } from '../src/store/store.js';
import { createTestDatabase, describeOrSkip, POSTGRES_SKIPPED, postgresUrl, sql } from './postgres.js';
import { buildApp } from '../src/app.js';
import { LOCK_WAIT_MS } from '../src/store/lock-wait.js';
import { MIGRATION_LOCK } from '../src/store/postgres/migrate.js';
import { call, factories, testConfig } from './helpers.js';
import { RANDOM_RUNS } from './store-contract/harness.js';
import { holdsTerms } from './store-contract/model.js';

/**
 * What the PostgreSQL store does beyond the Store contract
 * (test/store-contract/), which it passes as SQLite does: migrations when
 * several instances start at once, the search words made again for another
 * Unicode version or design, PostgreSQL's limits, and transactions.
 */

const someone = async (store: Store): Promise<Viewer> => ({
  userId: (await store.createUser({ email: `${Math.random().toString(36).slice(2)}@example.com`, name: null, plan: null, now: '2026-01-01T00:00:00.000Z' })).id,
  orgId: null,
});
const newDocument = (title: string, contentMarkdown: string) => ({ title, contentMarkdown, projectId: null, threadId: null });
const sleep = (ms: number) => new Promise<undefined>((resolve) => setTimeout(resolve, ms));
const found = async (store: Store, viewer: Viewer, q: string) => (await store.listDocuments(viewer, { limit: 100, terms: searchTerms(q) })).map((d) => d.id);

const server = await postgresUrl();
if (server === null) {
  describeOrSkip('PostgreSQL store', POSTGRES_SKIPPED, () => {});
} else {
  describe('PostgreSQL store', () => {
    /** Runs `work` on a database made for it, dropped after. */
    const inNewDatabase = async (work: (url: string) => Promise<void>) => {
      const database = await createTestDatabase(server);
      try {
        await work(database.url);
      } finally {
        await database.drop();
      }
    };

    /** Opens a store on `url` again, hearing of any rebuild of the search words, runs `work` with it, and closes it. */
    const reopened = async (url: string, work: (store: Store, heard: [string | null, string][]) => Promise<void>) => {
      const heard: [string | null, string][] = [];
      const store = await openPostgresStore(url, { onReindex: (from, to) => heard.push([from, to]) });
      try {
        await work(store, heard);
      } finally {
        await store.close();
      }
    };

    /** Runs `work` on a new schema of a database made for it (dropped after), with a store opened on it, to close, and a user of it. */
    const onNewSchema = async (work: (url: string, first: Store, viewer: Viewer) => Promise<void>) => {
      const database = await createTestDatabase(server);
      try {
        const url = await database.schemaUrl();
        const first = await openPostgresStore(url);
        await work(url, first, await someone(first));
      } finally {
        await database.drop();
      }
    };

    it('migrates a fresh database once when ten instances start at once, and every one opens', async () => {
      const database = await createTestDatabase(server);
      try {
        const notices: [number, number][] = [];
        const stores = await Promise.all(
          Array.from({ length: 10 }, () => openPostgresStore(database.url, { poolMax: 2, onMigrate: (from, to) => notices.push([from, to]) })),
        );
        try {
          assert.deepEqual(notices, [[0, migrations.length]], 'one instance migrated');
          const versions = await sql(database.url, 'SELECT version FROM folio_schema_versions ORDER BY version');
          assert.deepEqual(versions.map((v) => v.version), migrations.map((_, i) => i + 1));
          const viewer = await someone(stores[0]!);
          const doc = await stores[3]!.createDocument(viewer, newDocument('Shared', 'onedatabase'), '2026-01-01T00:00:01.000Z');
          for (const store of stores) assert.deepEqual(await found(store, viewer, 'onedatabase'), [doc!.id]);
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
      } finally {
        await database.drop();
      }
    });

    it('makes the search words again when they were made with another Unicode version', async () => {
      await onNewSchema(async (url, first, viewer) => {
        const doc = await first.createDocument(viewer, newDocument('Ελληνικά', 'Καλημέρα'), '2026-01-01T00:00:01.000Z');
        await first.close();
        // As an older Node.js would have left it: words of another folding.
        await sql(url, `UPDATE search_index_facts SET value = '1.0' WHERE name = 'unicode'`);
        await sql(url, `UPDATE documents SET search = array_to_tsvector(ARRAY['outdated'])`);
        await reopened(url, async (again, heard) => {
          assert.deepEqual(heard, [['1.0', process.versions.unicode]]);
          assert.deepEqual(await found(again, viewer, 'ελληνικα καλημ'), [doc!.id]);
          assert.deepEqual(await found(again, viewer, 'outdated'), []);
        });
      });
    });

    it('makes the search words again when an earlier version of Folio made them without workspace words', async () => {
      await onNewSchema(async (url, first, viewer) => {
        const project = await first.createProject({ creatorId: viewer.userId, orgId: null, name: 'Mine', description: null, now: '2026-01-01T00:00:00.000Z' });
        const outside = await first.createDocument(viewer, newDocument('Outside', 'earlierwords'), '2026-01-01T00:00:01.000Z');
        const inside = await first.createDocument(viewer, { ...newDocument('Inside', 'earlierwords'), projectId: project.id }, '2026-01-01T00:00:02.000Z');
        assert.deepEqual(await found(first, viewer, 'earlierwords'), [inside!.id, outside!.id]);
        await first.close();
        // As the first design of the words left them: no workspace word, no record of the design.
        await sql(url, `DELETE FROM search_index_facts WHERE name = 'words'`);
        await sql(url, `UPDATE documents SET search = ts_delete(search, chr(${SCOPE_MARK.codePointAt(0)}) || 'w' || workspace_id)`);
        await reopened(url, async (again, heard) => {
          assert.deepEqual(heard, [[process.versions.unicode, process.versions.unicode]]);
          assert.deepEqual(await found(again, viewer, 'earlierwords'), [inside!.id, outside!.id]);
        });
      });
    });

    it("keeps each document's title words apart when an earlier version of Folio did not, so that an edit keeping the title still finds it", async () => {
      await onNewSchema(async (url, first, viewer) => {
        const doc = await first.createDocument(viewer, newDocument('Quarterly titleword', 'bodyword'), '2026-01-01T00:00:01.000Z');
        await first.close();
        // As the second design of the words and migration 3 left them: the title's words in the document's words only.
        await sql(url, `UPDATE search_index_facts SET value = '2' WHERE name = 'words'`);
        await sql(url, `UPDATE documents SET title_words = '{}'`);
        await reopened(url, async (again, heard) => {
          assert.deepEqual(heard, [[process.versions.unicode, process.versions.unicode]]);
          const outcome = await again.updateDocument(viewer, doc!.id, { contentMarkdown: 'newbody', expectedUpdatedAt: null }, () => '2026-01-01T00:00:02.000Z');
          assert.equal(outcome.status, 'updated');
          assert.deepEqual(await found(again, viewer, 'titlew newb'), [doc!.id]);
          assert.deepEqual(await found(again, viewer, 'bodyword'), []);
        });
      });
    });

    it("keeps a document's Markdown once, as its newest revision's, recording the current state where history lacks it (migration 4)", async () => {
      await onNewSchema(async (url, first, viewer) => {
        const at = (s: number) => `2026-01-01T00:00:0${s}.000Z`;
        const edited = await first.createDocument(viewer, newDocument('Edited', 'first draft'), at(1));
        await first.updateDocument(viewer, edited!.id, { contentMarkdown: 'second draft', expectedUpdatedAt: null }, () => at(2));
        const unrecorded = await first.createDocument(viewer, newDocument('Unrecorded', 'never recorded'), at(3));
        const stale = await first.createDocument(viewer, newDocument('Stale', 'older text'), at(4));
        await first.close();
        // As migration 3 left them, the Markdown in the row; and two documents whose history is not their current state.
        await sql(url, 'ALTER TABLE documents ADD COLUMN content text');
        await sql(url, 'UPDATE documents d SET content = c.content FROM document_revisions c WHERE c.document_id = d.id AND c.number = d.revision');
        await sql(url, 'ALTER TABLE documents ALTER COLUMN content SET NOT NULL, DROP COLUMN revision');
        await sql(url, 'DELETE FROM document_revisions WHERE document_id = $1', [unrecorded!.id]);
        await sql(url, `UPDATE documents SET content = 'newer text' WHERE id = $1`, [stale!.id]);
        await sql(url, 'DELETE FROM folio_schema_versions WHERE version = 4');
        await reopened(url, async (again) => {
          const expected = [
            [edited!.id, 'second draft', [2, 1]],
            [unrecorded!.id, 'never recorded', [1]],
            [stale!.id, 'newer text', [2, 1]],
          ] as const;
          for (const [id, content, numbers] of expected) {
            assert.equal((await again.getDocument(viewer, id))?.contentMarkdown, content);
            assert.deepEqual((await again.listRevisions(viewer, id, 20))?.map((r) => r.number), numbers);
            assert.equal((await again.getRevision(viewer, id, numbers[0]) as { contentMarkdown: string }).contentMarkdown, content);
          }
          assert.equal((await again.getRevision(viewer, stale!.id, 1) as { contentMarkdown: string }).contentMarkdown, 'older text');
          const [column] = await sql(url, `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'documents' AND column_name = 'content'`);
          assert.deepEqual(column, { n: 0 });
          const outcome = await again.updateDocument(viewer, stale!.id, { contentMarkdown: 'third text', expectedUpdatedAt: null }, () => at(5));
          assert.equal(outcome.status, 'updated');
          assert.deepEqual((await again.listRevisions(viewer, stale!.id, 20))?.map((r) => r.number), [3, 2, 1]);
          assert.equal((await again.getDocument(viewer, stale!.id))?.contentMarkdown, 'third text');
        });
      });
    });

    it('refuses search words of a later design than its own, leaving them as a newer Folio made them', async () => {
      await onNewSchema(async (url, first, viewer) => {
        await first.createDocument(viewer, newDocument('Kept', 'newerwords'), '2026-01-01T00:00:01.000Z');
        await first.close();
        // As a newer Folio would leave them: words of a design after this one's.
        const later = String(Number(SEARCH_WORDS) + 1);
        await sql(url, `UPDATE search_index_facts SET value = $1 WHERE name = 'words'`, [later]);
        await sql(url, `UPDATE documents SET search = search || array_to_tsvector(ARRAY['newerdesign'])`);
        const words = async () => (await sql(url, 'SELECT search::text AS words FROM documents ORDER BY id')).map((r) => r.words);
        const before = await words();
        const heard: unknown[] = [];
        await assert.rejects(
          openPostgresStore(url, { onReindex: (from, to) => heard.push([from, to]) }),
          (err: Error) =>
            err instanceof NewerSchema &&
            err.message.startsWith(`the database's search words are of design ${later}, and this Folio makes design ${SEARCH_WORDS}: a newer Folio has upgraded`),
        );
        assert.deepEqual(heard, []);
        assert.deepEqual(await words(), before);
        assert.deepEqual((await sql(url, `SELECT value FROM search_index_facts WHERE name = 'words'`))[0]!.value, later);
      });
    });

    it('answers 500 in the spec’s envelope when another session holds a lock past LOCK_WAIT_MS, then serves again once it is released', async () => {
      await onNewSchema(async (url, store) => {
        const make = factories(store, Date.now);
        const user = await make.user();
        const { secret } = await make.key(user.id);
        const doc = await make.document(user.id, { title: 'Locked' });
        const app = await buildApp({ config: testConfig({ DATABASE_URL: url }), store });
        const holder = new pg.Client({ connectionString: url });
        await holder.connect();
        try {
          // As an operator's session, or a newer Folio's migration, might.
          await holder.query('BEGIN');
          await holder.query('LOCK TABLE documents IN ACCESS EXCLUSIVE MODE');
          const started = performance.now();
          const refused = await Promise.race([call(app, 'GET', `/v1/documents/${doc.id}`, { key: secret }), sleep(3 * LOCK_WAIT_MS)]);
          const waited = performance.now() - started;
          assert.ok(refused, `no answer after ${Math.round(waited)} ms`);
          assert.equal(refused.status, 500, refused.raw);
          assert.equal(refused.body.error.code, 'internal_error');
          assert.doesNotMatch(refused.raw, /lock|timeout|cancel|documents/i);
          assert.ok(waited >= LOCK_WAIT_MS - 50 && waited < LOCK_WAIT_MS + 3000, `answered after ${Math.round(waited)} ms`);
          await holder.query('COMMIT');
          assert.equal((await call(app, 'GET', `/v1/documents/${doc.id}`, { key: secret })).status, 200);
        } finally {
          await holder.end();
          await app.close();
          await store.close();
        }
      });
    });

    it('fails a statement that waited LOCK_WAIT_MS for a connection of the pool, all of them busy', async () => {
      await inNewDatabase(async (url) => {
        const store = await openPostgresStore(url, { poolMax: 1 });
        try {
          const viewer = await someone(store);
          // The one connection, busy with a transaction past LOCK_WAIT_MS.
          const busy = store.atomically(async (tx) => {
            await tx.ping();
            await sleep(LOCK_WAIT_MS + 2000);
          });
          const started = performance.now();
          const refusal = await store.listDocuments(viewer, { limit: 20 }).then(() => 'read', (err: unknown) => err);
          const waited = performance.now() - started;
          assert.ok(refusal instanceof Error, `the read: ${String(refusal)}`);
          assert.ok(waited >= LOCK_WAIT_MS - 50 && waited < LOCK_WAIT_MS + 1500, `failed after ${Math.round(waited)} ms`);
          await busy;
          assert.deepEqual(await store.listDocuments(viewer, { limit: 20 }), []);
        } finally {
          await store.close();
        }
      });
    });

    it('waits for another instance’s migrations longer than LOCK_WAIT_MS, then opens, its connection waiting LOCK_WAIT_MS again', async () => {
      await inNewDatabase(async (url) => {
        const other = new pg.Client({ connectionString: url });
        await other.connect();
        try {
          // Another instance's migrations, as long as a rebuild of the search words may take.
          await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
          const released = sleep(LOCK_WAIT_MS + 1000).then(() => other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]));
          released.catch(() => {}); // the store failed to open, and the session ended
          // One connection: the one that waited and migrated serves what follows.
          const store = await openPostgresStore(url, { poolMax: 1 });
          await released;
          try {
            const viewer = await someone(store);
            const doc = await store.createDocument(viewer, newDocument('After', 'migrated'), '2026-01-01T00:00:01.000Z');
            await other.query('BEGIN');
            await other.query('LOCK TABLE documents IN ACCESS EXCLUSIVE MODE');
            const read = store.getDocument(viewer, doc!.id).then(() => 'read', (err: unknown) => err);
            const refusal = await Promise.race([read, sleep(3 * LOCK_WAIT_MS).then(() => 'still waiting')]);
            assert.ok(refusal instanceof Error, `the read under the lock: ${String(refusal)}`);
            await other.query('COMMIT');
            assert.equal((await store.getDocument(viewer, doc!.id))?.title, 'After');
          } finally {
            // Ending the other session first releases its locks, for which a statement of the store's may still wait.
            await other.end().catch(() => {});
            await store.close();
          }
        } finally {
          await other.end().catch(() => {});
        }
      });
    });

    it('finds what DESIGN §3 finds in text of any characters, as the SQLite store does', async () => {
      const database = await createTestDatabase(server);
      const { store, close } = await database.openStore();
      // Any code point PostgreSQL's text can hold (no U+0000, no lone surrogate), often a letter of a few scripts.
      const char = fc.oneof(fc.constantFrom(...'aÄß Ωσς Жё ǅﬁ ١٢ 日本 क़ ‍ -.,\n'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }));
      const text = fc.array(char, { maxLength: 30 }).map((cs) => cs.join('')).filter((t) => t.isWellFormed() && !t.includes('\u0000'));
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 6 }), fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { maxLength: 6 }), async (texts, picks) => {
            const viewer = await someone(store);
            const docs = [];
            for (const [i, t] of texts.entries()) {
              docs.push({ id: (await store.createDocument(viewer, newDocument(`d${i}`, t || '.'), '2026-01-01T00:00:01.000Z'))!.id, title: `d${i}`, contentMarkdown: t || '.' });
            }
            // Queries from the words' own prefixes, as typed (before folding), so that some find something.
            for (const [doc, word, length] of picks) {
              const words = texts[doc % texts.length]!.match(/[\p{L}\p{N}\p{M}\p{Co}]+/gu) ?? [];
              const q = words.length === 0 ? 'x' : [...words[word % words.length]!].slice(0, 1 + (length % 4)).join('');
              const terms = searchTerms(q);
              if (terms.length === 0) continue;
              const expected = docs.filter((d) => holdsTerms(d, terms)).map((d) => d.id).sort();
              assert.deepEqual((await found(store, viewer, q)).sort(), expected, `${JSON.stringify(q)} as ${JSON.stringify(terms.map(foldText))}`);
            }
          }),
          { numRuns: RANDOM_RUNS * 4 },
        );
      } finally {
        await close();
        await database.drop();
      }
    });

    it('finds documents past PostgreSQL’s limits on a word and on a tsvector', async () => {
      const database = await createTestDatabase(server);
      const { store, close } = await database.openStore();
      try {
        const viewer = await someone(store);
        // A word longer than a lexeme may be (2,047 bytes), found by its start and whole.
        const long = 'x'.repeat(3000);
        const longDoc = await store.createDocument(viewer, newDocument('Long', `before ${long} after`), '2026-01-01T00:00:01.000Z');
        for (const q of [long.slice(0, 100), long, 'after']) assert.deepEqual(await found(store, viewer, q), [longDoc!.id]);
        // More distinct words than a tsvector holds (1 MB): the prose is still found.
        const many = Array.from({ length: 120_000 }, (_, i) => `w${i.toString(36).padStart(9, 'q')}`).join(' ');
        const big = await store.createDocument(viewer, newDocument('Big', `plainprose ${many}`), '2026-01-01T00:00:02.000Z');
        assert.deepEqual(await found(store, viewer, 'plainprose'), [big!.id]);
        assert.deepEqual(await found(store, viewer, 'p'), [big!.id]);
      } finally {
        await close();
        await database.drop();
      }
    });

    it('reads a search from the GIN index where the planner would scan every document (migration 2)', async (t) => {
      const database = await createTestDatabase(server);
      const url = await database.schemaUrl();
      const store = await openPostgresStore(url);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const viewer = await someone(store);
        for (let i = 0; i < 40; i++) await store.createDocument(viewer, newDocument(`Note ${i}`, `plannerword ${i}`), `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`);
        // auto_explain sends the plan of every statement, nested ones too, to this client.
        try {
          await client.query("LOAD 'auto_explain'");
        } catch (err) {
          t.skip(`this role cannot load auto_explain, which shows the plans: ${(err as Error).message}`);
          return;
        }
        for (const setting of ['log_min_duration = 0', 'log_nested_statements = on', 'log_level = notice']) await client.query(`SET auto_explain.${setting}`);
        await client.query('SET client_min_messages = notice');
        const plans: string[] = [];
        client.on('notice', (notice) => plans.push(notice.message ?? ''));
        const planOf = async (text: string, values: unknown[]) => {
          plans.length = 0;
          const { rowCount } = await client.query(text, values);
          return { rowCount, plans: plans.join('\n') };
        };

        // The premise: left to itself, the planner scans these few documents.
        const bare = await planOf('SELECT id FROM documents WHERE search @@ $1::tsquery', ['plannerword:*']);
        assert.equal(bare.rowCount, 40);
        assert.match(bare.plans, /Seq Scan on documents/);

        const { rowCount, plans: searched } = await planOf(SEARCH, [viewer.userId, null, termsQuery(['plannerword']), 100]);
        assert.equal(rowCount, 40);
        assert.match(searched, /Function Scan on folio_documents_matching/);
        assert.match(searched, /Bitmap Index Scan on documents_search/);
        assert.doesNotMatch(searched, /Seq Scan on documents/);
      } finally {
        await client.end();
        await store.close();
        await database.drop();
      }
    });

    it('writes the scope words of a search in SQL as lexemes, whatever characters a place id holds', async () => {
      const database = await createTestDatabase(server);
      try {
        const ids = fc.sample(fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !s.includes('\u0000')), 50);
        for (const id of [...ids, "o'brien", 'back\\slash', "\\'", "'' | !x:*", 'a & b']) {
          const [row] = await sql(
            database.url,
            `SELECT array_to_tsvector(ARRAY[$1::text]) @@ ${scopeQuerySql('SELECT $1::text AS word')} AS itself,
                    array_to_tsvector(ARRAY[$1::text || 'x']) @@ ${scopeQuerySql('SELECT $1::text AS word')} AS longer,
                    ${scopeQuerySql('SELECT $1::text AS word WHERE false')} IS NULL AS none`,
            [id],
          );
          assert.deepEqual(row, { itself: true, longer: false, none: true }, JSON.stringify(id));
        }
      } finally {
        await database.drop();
      }
    });

    it('compresses a document’s words and its revisions’ Markdown with LZ4 where the server has it (migration 2)', async () => {
      const database = await createTestDatabase(server);
      const url = await database.schemaUrl();
      const store = await openPostgresStore(url);
      try {
        const lz4 = await sql(url, 'CREATE TEMPORARY TABLE lz4_probe (t text COMPRESSION lz4)').then(
          () => true,
          () => false,
        );
        const viewer = await someone(store);
        // Long enough to be compressed (past 2 kB), and compressible.
        const text = Array.from({ length: 400 }, (_, i) => `line ${i % 50} of the compressed note`).join('\n');
        const doc = await store.createDocument(viewer, newDocument('Compressed', text), '2026-01-01T00:00:01.000Z');
        const [row] = await sql(
          url,
          `SELECT pg_column_compression(r.content) AS revision FROM document_revisions r WHERE r.document_id = $1`,
          [doc!.id],
        );
        const expected = lz4 ? 'lz4' : 'pglz';
        assert.deepEqual(row, { revision: expected });
        const columns = await sql(
          url,
          `SELECT c.relname || '.' || a.attname AS "column", a.attcompression AS method FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
           WHERE c.relnamespace = current_schema()::regnamespace AND (c.relname, a.attname) IN (('documents', 'search'), ('document_revisions', 'content'))
           ORDER BY 1`,
        );
        assert.deepEqual(columns, ['document_revisions.content', 'documents.search'].map((column) => ({ column, method: lz4 ? 'l' : '' })));
      } finally {
        await store.close();
        await database.drop();
      }
    });

    it('refuses text holding U+0000, which PostgreSQL cannot store, as the caller’s fault', async () => {
      const database = await createTestDatabase(server);
      const { store, close } = await database.openStore();
      try {
        const viewer = await someone(store);
        await assert.rejects(store.createDocument(viewer, newDocument('Nul', 'a\u0000b'), '2026-01-01T00:00:01.000Z'), InvalidRequest);
        assert.deepEqual(await store.listDocuments(viewer, { limit: 100 }), []);
      } finally {
        await close();
        await database.drop();
      }
    });

    it('undoes a nested atomic run alone, and refuses to commit one whose statement failed', async () => {
      const database = await createTestDatabase(server);
      const { store, close } = await database.openStore();
      try {
        const viewer = await someone(store);
        const failure = new Error('inner run stopped');
        await store.atomically(async (tx) => {
          await tx.createDocument(viewer, newDocument('Kept', 'keptword'), '2026-01-01T00:00:01.000Z');
          await assert.rejects(
            tx.atomically(async (inner) => {
              await inner.createDocument(viewer, newDocument('Undone', 'undoneword'), '2026-01-01T00:00:02.000Z');
              throw failure;
            }),
            (err) => err === failure,
          );
        });
        assert.equal((await found(store, viewer, 'keptword')).length, 1);
        assert.deepEqual(await found(store, viewer, 'undoneword'), []);

        const email = `twice.${Date.now()}@example.com`;
        await store.createUser({ email, name: null, plan: null, now: '2026-01-01T00:00:03.000Z' });
        await assert.rejects(
          store.atomically(async (tx) => {
            await tx.createDocument(viewer, newDocument('Lost', 'lostword'), '2026-01-01T00:00:04.000Z');
            // The refusal is caught, but PostgreSQL has ended the transaction.
            await tx.createUser({ email, name: null, plan: null, now: '2026-01-01T00:00:04.000Z' }).catch(() => {});
          }),
          /rolled back/,
        );
        assert.deepEqual(await found(store, viewer, 'lostword'), []);
      } finally {
        await close();
        await database.drop();
      }
    });

    it('fails a statement a stalled connection leaves unanswered, and serves again on a new connection once PostgreSQL answers', async () => {
      const database = await createTestDatabase(server);
      // Between the store and PostgreSQL: a proxy that can stop passing bytes on, as a network cut off does.
      let stalled = false;
      const pairs: [Socket, Socket][] = [];
      const proxy = createServer((client) => {
        const target = new URL(database.url);
        const upstream = connect(Number(target.port || 5432), target.hostname);
        pairs.push([client, upstream]);
        for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
          from.on('data', (chunk) => {
            if (!stalled) to.write(chunk);
          });
          from.on('error', () => to.destroy());
          from.on('close', () => to.destroy());
        }
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      const through = new URL(database.url);
      through.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const store = await openPostgresStore(through.toString(), { answerWithinMs: 500 });
      const outcome = (work: Promise<unknown>) => Promise.race([work.then(() => 'answered', () => 'failed'), sleep(5000).then(() => 'still waiting')]);
      try {
        await store.ping();
        stalled = true;
        assert.equal(await outcome(store.ping()), 'failed');
        stalled = false;
        assert.equal(await outcome(store.ping()), 'answered');
      } finally {
        await Promise.race([store.close(), sleep(1000)]);
        for (const pair of pairs) for (const socket of pair) socket.destroy();
        proxy.close();
        await database.drop();
      }
    });

    it('fails a transaction whose connection PostgreSQL ends, and serves again, without ending the process', async () => {
      const database = await createTestDatabase(server);
      // The store's connections are told apart by their application name, so that only theirs are ended.
      const name = `folio_cut_${process.pid}`;
      const named = new URL(database.url);
      named.searchParams.set('application_name', name);
      const store = await openPostgresStore(named.toString());
      try {
        const viewer = await someone(store);
        await assert.rejects(
          store.atomically(async (tx) => {
            await tx.createDocument(viewer, newDocument('Cut off', 'cutword'), '2026-01-01T00:00:01.000Z');
            // An operator's pg_terminate_backend, or a server restarting, between two statements of the transaction:
            // without a listener, the connection's 'error' event was an uncaught exception.
            await sql(database.url, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle in transaction'`, [name]);
            await tx.ping();
          }),
        );
        assert.deepEqual(await found(store, viewer, 'cutword'), []);
        await store.ping();
      } finally {
        await store.close();
        await database.drop();
      }
    });

    it('shuts down on SIGTERM while PostgreSQL does not answer, rather than waiting for its goodbye', async () => {
      const database = await createTestDatabase(server);
      // Between Folio and PostgreSQL: a proxy that can stop passing anything on, the end of a connection included, as a stalled server or a network cut off does.
      let stalled = false;
      const sockets: Socket[] = [];
      const target = new URL(database.url);
      const proxy = createServer({ allowHalfOpen: true }, (client) => {
        const upstream = connect({ port: Number(target.port || 5432), host: target.hostname, allowHalfOpen: true });
        sockets.push(client, upstream);
        for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
          from.on('data', (chunk) => {
            if (!stalled) to.write(chunk);
          });
          from.on('end', () => {
            if (!stalled) to.end();
          });
          from.on('error', () => to.destroy());
        }
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      const through = new URL(database.url);
      through.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: through.toString(), PORT: '0', LOG_LEVEL: 'info' };
      delete env.REDIS_URL;
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/serve.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = once(child, 'exit');
      try {
        const port = await new Promise<number>((resolve, reject) => {
          child.stdout.on('data', () => {
            const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
            if (m) resolve(Number(m[1]));
          });
          void exited.then(([code]) => reject(new Error(`the server exited early (${String(code)}): ${output}`)));
        });
        // Connections of the pool, idle once answered.
        const answers = await Promise.all([1, 2, 3].map(() => fetch(`http://127.0.0.1:${port}/healthz`)));
        assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
        stalled = true;
        child.kill('SIGTERM');
        const outcome = await Promise.race([exited.then(([code]) => code), sleep(20_000).then(() => 'still running')]);
        assert.equal(outcome, 0, output);
        assert.match(output, /shutting down/);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        for (const socket of sockets) socket.destroy();
        proxy.close();
        await database.drop();
      }
    });
  });
}
