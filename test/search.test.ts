import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { call, setup, type TestContext } from './helpers.js';
import Database from 'better-sqlite3';
import { searchTerms } from '../src/domain/search.js';
import { SEARCH_TOKENIZER } from '../src/store/sqlite/migrations.js';

describe('document search', () => {
  let t: TestContext;
  let key: string;
  const ids: Record<string, string> = {};
  before(async () => {
    t = await setup({ env: { READ_LIMIT_PER_MIN: '1000000' } });
    const user = await t.make.user();
    key = (await t.make.key(user.id)).secret;
    const docs = {
      cafe: { title: 'Café Society', content: 'Notes on the crème brûlée served at noon.' },
      kubernetes: { title: 'Cluster runbook', content: 'Restart the Kubernetes deployment, then check the ingress.' },
      cpp: { title: 'C++ style guide', content: 'Prefer RAII. Avoid raw new and delete.' },
      near: { title: 'Meeting notes', content: 'We met NEAR the station AND talked about "quoted" words.' },
      emoji: { title: 'Launch 🚀 party', content: 'Cake for everyone.' },
      marks: { title: 'काम सूची', content: 'Ring z\u0489w and q\u20DDr.' },
      other: { title: 'Unrelated', content: 'Nothing to see here.' },
    };
    for (const [name, d] of Object.entries(docs)) {
      ids[name] = (await t.make.document(user.id, { title: d.title, content: d.content })).id;
      t.clock.advance(1000);
    }
  });
  after(() => t.close());

  const search = async (q: string) => {
    const res = await call(t.app, 'GET', `/v1/documents?q=${encodeURIComponent(q)}`, { key });
    assert.equal(res.status, 200, `q=${q}: ${JSON.stringify(res.body)}`);
    return res.body.documents.map((d: any) => d.id) as string[];
  };

  it('matches whole words and word prefixes in titles and content', async () => {
    assert.deepEqual(await search('runbook'), [ids.kubernetes]);
    assert.deepEqual(await search('kube'), [ids.kubernetes]);
    assert.deepEqual(await search('ingress'), [ids.kubernetes]);
    assert.deepEqual(await search('ubernetes'), [], 'infixes do not match');
  });

  it('is case- and diacritic-insensitive', async () => {
    assert.deepEqual(await search('cafe'), [ids.cafe]);
    assert.deepEqual(await search('CAFÉ'), [ids.cafe]);
    assert.deepEqual(await search('creme brulee'), [ids.cafe]);
    assert.deepEqual(await search('Crème'), [ids.cafe]);
  });

  it('requires every term', async () => {
    assert.deepEqual(await search('restart ingress'), [ids.kubernetes]);
    assert.deepEqual(await search('restart cafe'), []);
  });

  it('lists matches newest first', async () => {
    assert.deepEqual(await search('notes'), [ids.near, ids.cafe]);
  });

  it('treats query syntax and symbols as text', async () => {
    assert.ok((await search('c++')).includes(ids.cpp!), '`c++` searches for words starting with c');
    assert.deepEqual(await search('c++ guide'), [ids.cpp]);
    assert.deepEqual(await search('"quoted"'), [ids.near]);
    assert.deepEqual(await search('NEAR('), [ids.near]);
    assert.deepEqual(await search('station AND'), [ids.near]);
    assert.deepEqual(await search('-delete'), [ids.cpp]);
    assert.deepEqual(await search('raii*'), [ids.cpp]);
    assert.deepEqual(await search('launch 🚀'), [ids.emoji]);
    assert.deepEqual(await search('🚀'), []);
    // Marks stay inside words: a Devanagari vowel sign (Mc), enclosing marks (Me).
    assert.deepEqual(await search('काम'), [ids.marks]);
    assert.deepEqual(await search('सू'), [ids.marks]);
    assert.deepEqual(await search('z\u0489w q\u20DD'), [ids.marks]);
    assert.deepEqual(await search('z\u0489x'), []);
    assert.deepEqual(await search('*'), []);
    assert.deepEqual(await search('title:cafe'), []);
    assert.deepEqual(await search('^"'), []);
  });

  it('never fails, whatever the user types', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 200, unit: 'grapheme' }), async (q) => {
        if ([...q].length > 200) return;
        const res = await call(t.app, 'GET', `/v1/documents?q=${encodeURIComponent(q)}`, { key });
        assert.equal(res.status, 200, `q=${JSON.stringify(q)}: ${res.raw}`);
      }),
      { numRuns: 300 },
    );
    const syntax = ['"', '""', 'AND', 'OR', 'NOT', 'NEAR(a b)', '(', ')', '{', '}', ':', '^', '*', '+', '-', "'", '\\', '\u0000', '%', '_'];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...syntax, 'cafe', 'notes'), { minLength: 1, maxLength: 20 }), async (parts) => {
        const q = parts.join(' ').slice(0, 200);
        if (q.trim() === '' && q.length === 0) return;
        const res = await call(t.app, 'GET', `/v1/documents?q=${encodeURIComponent(q)}`, { key });
        assert.equal(res.status, 200, `q=${JSON.stringify(q)}: ${res.raw}`);
      }),
      { numRuns: 200 },
    );
  });

  it('splits queries into words the way the index does', () => {
    assert.deepEqual(searchTerms('C++ and "Café"'), ['c', 'and', 'café']);
    assert.deepEqual(searchTerms('🚀 ***'), []);
    assert.deepEqual(searchTerms('naïve naïve'), ['naïve']);
  });

  it("keeps inside one index word every character the query's word splitting keeps inside a word", () => {
    // The index stores no word positions, so FTS5 refuses a quoted term that
    // its tokenizer would split in two: every character searchTerms keeps in
    // a word must be a word character of the index's tokenizer too.
    const db = new Database(':memory:');
    db.exec(`CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = "${SEARCH_TOKENIZER}");
      CREATE VIRTUAL TABLE words USING fts5vocab (t, 'instance');`);
    const insert = db.prepare('INSERT INTO t (rowid, x) VALUES (1, ?)');
    const count = db.prepare('SELECT count(*) FROM words').pluck();
    const clear = db.prepare('DELETE FROM t');
    const split: string[] = [];
    let checked = 0;
    for (let from = 0; from <= 0x10ffff; from += 4096) {
      const kept: string[] = [];
      for (let cp = from; cp < from + 4096 && cp <= 0x10ffff; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        const c = String.fromCodePoint(cp);
        const terms = searchTerms(`a${c}b`);
        if (terms.length === 1 && terms[0] === `a${c}b`.normalize('NFC').toLowerCase()) kept.push(c);
      }
      if (kept.length === 0) continue;
      insert.run(kept.map((c) => `a${c}b`).join(' '));
      if (count.get() !== kept.length) {
        for (const c of kept) {
          clear.run();
          insert.run(`a${c}b`);
          if (count.get() !== 1) split.push(`U+${c.codePointAt(0)!.toString(16).toUpperCase()}`);
        }
      }
      clear.run();
      checked += kept.length;
    }
    db.close();
    assert.ok(checked > 100_000, `checked ${checked} characters`);
    assert.deepEqual(split, []);
  });
});
