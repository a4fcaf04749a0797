import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { call, setup, type TestContext } from './helpers.js';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FOLDED_BY_FOLIO, foldText, MARK_RUN, SCOPE_MARK, searchTerms, searchText, shortMarkRuns } from '../src/domain/search.js';
import { SEARCH_TOKENIZER } from '../src/store/sqlite/migrations.js';
import { ftsMatch, wholeWords } from '../src/store/sqlite/search.js';
import { migrate } from '../src/store/sqlite/database.js';

/**
 * A search index of one column with the index's tokenizer (`t`), its words
 * as `words`, the insertion of row 1, and `wordsOf`: the words of a text
 * indexed alone, in order (the empty word as '').
 */
function tokenizerTable(words: 'row' | 'instance') {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = "${SEARCH_TOKENIZER}");
    CREATE VIRTUAL TABLE words USING fts5vocab (t, '${words}');`);
  const insert = db.prepare('INSERT INTO t (rowid, x) VALUES (1, ?)');
  const terms = db.prepare("SELECT coalesce(term, '') FROM words ORDER BY term").pluck();
  const wordsOf = (text: string) => {
    db.exec('DELETE FROM t');
    insert.run(text);
    return terms.all() as string[];
  };
  return { db, insert, wordsOf };
}

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
      marks: { title: 'काम सूची', content: 'Ring z\u0489w and q\u20DDr. An accent \u0301 on its own.' },
      other: { title: 'Unrelated', content: 'Nothing to see here.' },
    };
    for (const [name, d] of Object.entries(docs)) {
      ids[name] = (await t.make.document(user.id, { title: d.title, content: d.content })).id;
      t.clock.advance(1000);
    }
    // Someone else's document with the same words, which no search here may
    // show: a search whose words match few documents reads them without the
    // caller's scope tokens, checking each against the visibility rule
    // (src/store/sqlite/search.ts, FEW_MATCHES).
    await t.make.document((await t.make.user()).id, { title: 'Elsewhere', content: 'Kubernetes runbook of another user.' });
  });
  after(() => t.close());

  /** A new user with documents of their own only, their read key, and the titles a search of theirs finds. */
  const ownWorkspace = async () => {
    const user = await t.make.user();
    const own = (await t.make.key(user.id)).secret;
    const found = async (q: string) => {
      const res = await call(t.app, 'GET', `/v1/documents?q=${encodeURIComponent(q)}`, { key: own });
      assert.equal(res.status, 200);
      return res.body.documents.map((d: any) => d.title) as string[];
    };
    return { user, own, found };
  };

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

  it('is diacritic-insensitive in every script that writes diacritics apart, and reads compatibility forms as letters', async () => {
    const { user, own, found } = await ownWorkspace();
    const titles = ['Ελληνικά κείμενα', 'Ёлка и йогурт', 'Tiếng Việt', 'Øresund bridge', 'Łódź trip', 'ﬁnance ＲＥＰＯＲＴ', 'ǅemal', '하나 둘', 'हिंदी सूची', 'Hauptstraße'];
    for (const title of titles) await t.make.document(user.id, { title, content: 'Body.' });
    const cases: [string, string[]][] = [
      ['ελληνικα', ['Ελληνικά κείμενα']],
      ['ΕΛΛΗΝΙΚΆ ΚΕΙΜ', ['Ελληνικά κείμενα']],
      ['елка йогурт', ['Ёлка и йогурт']],
      ['иогурт', ['Ёлка и йогурт']],
      ['tieng viet', ['Tiếng Việt']],
      ['TIẾNG', ['Tiếng Việt']],
      ['oresund', ['Øresund bridge']],
      ['lodz', ['Łódź trip']],
      ['finance report', ['ﬁnance ＲＥＰＯＲＴ']],
      ['ﬁn', ['ﬁnance ＲＥＰＯＲＴ']],
      ['dzemal', ['ǅemal']],
      ['hauptstrasse', ['Hauptstraße']],
      ['HAUPTSTRAẞE', ['Hauptstraße']],
      ['hauptstraß', ['Hauptstraße']],
      ['하나', ['하나 둘']],
      // A Korean syllable stays one letter: 한 is not a prefix of 하나.
      ['한', []],
      // Devanagari's vowel signs are part of its letters, not diacritics.
      ['हिंदी', ['हिंदी सूची']],
      ['हदी', []],
    ];
    for (const [q, expected] of cases) assert.deepEqual(await found(q), expected, q);
    // The index is changed as it was written: an edit of such a document leaves no trace of its old words.
    const [greek] = (await call(t.app, 'GET', '/v1/documents?q=ελληνικα', { key: own })).body.documents;
    const writer = (await t.make.key(user.id, { write: true })).secret;
    const edited = await call(t.app, 'PATCH', `/v1/documents/${greek.id}`, {
      key: writer,
      body: { title: 'Plain title', contentMarkdown: 'Body.', expectedUpdatedAt: greek.updatedAt },
    });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(await found('ελληνικα'), []);
    assert.deepEqual(await found('plain'), ['Plain title']);
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
    // A combining accent on its own is no word: diacritics are taken out of
    // queries as out of documents, and it does not match every document.
    assert.deepEqual(await search('\u0301'), []);
    assert.deepEqual(await search('\u0300\u0301'), []);
    assert.deepEqual(await search('cafe \u0301'), [ids.cafe]);
    assert.deepEqual(await search('ring \u0301'), [ids.marks]);
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

  it('is case-insensitive in scripts whose capitals the tokenizer does not fold, and finds text typed as it was written', async () => {
    const { user, found } = await ownWorkspace();
    const cherokee = 'ᏣᎳᎩ notes';
    const georgian = 'ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ report';
    const adlam = '𞤀𞤣𞤤𞤢𞤥 list';
    const latin = 'Ꞵeta release';
    for (const title of [cherokee, georgian, adlam, latin]) await t.make.document(user.id, { title, content: 'Body.' });
    const cases: [string, string[]][] = [
      ['ᏣᎳᎩ', [cherokee]],
      ['ꮳꮃꭹ', [cherokee]],
      ['ꮳꮃ', [cherokee]],
      ['ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ', [georgian]],
      ['საქართველო', [georgian]],
      ['𞤀𞤣𞤤𞤢𞤥', [adlam]],
      ['𞤢𞤣𞤤𞤢𞤥', [adlam]],
      ['ꞵeta', [latin]],
      ['ꞴETA', [latin]],
    ];
    for (const [q, expected] of cases) assert.deepEqual(await found(q), expected, q);
  });

  it('reads a final sigma as any other, in documents and queries of either case', async () => {
    // JavaScript lowers a capital Σ at a word's end to ς, elsewhere to σ.
    const { user, found } = await ownWorkspace();
    const titles = ['ΠΡΟΣΦΟΡΑ 2026', 'Προσφορά νέα', 'ΟΔΟΣ Αθηνάς', 'οδοσ σημειώσεις'];
    for (const title of titles) await t.make.document(user.id, { title, content: 'Body.' });
    const cases: [string, string[]][] = [
      ['ΠΡΟΣ', ['ΠΡΟΣΦΟΡΑ 2026', 'Προσφορά νέα']],
      ['προς', ['ΠΡΟΣΦΟΡΑ 2026', 'Προσφορά νέα']],
      ['προσ', ['ΠΡΟΣΦΟΡΑ 2026', 'Προσφορά νέα']],
      ['ΟΔΟΣ', ['ΟΔΟΣ Αθηνάς', 'οδοσ σημειώσεις']],
      ['οδος', ['ΟΔΟΣ Αθηνάς', 'οδοσ σημειώσεις']],
      ['οδοσ', ['ΟΔΟΣ Αθηνάς', 'οδοσ σημειώσεις']],
      ['ς', ['οδοσ σημειώσεις']],
      ['σημειωσεις', ['οδοσ σημειώσεις']],
    ];
    for (const [q, expected] of cases) assert.deepEqual((await found(q)).sort(), expected.sort(), q);
  });

  it('finds words beside characters that make no word, those newer than the tokenizer\'s Unicode too', async () => {
    // Bidi isolates and the Arabic letter mark of right-to-left text, newer currency signs and symbols only separate words.
    const { user, found } = await ownWorkspace();
    const titles = ['\u2067שלום\u2069 עולם', '\u061Cمرحبا بكم', 'Price ₺50 or ₽70', '⏸pause here', 'ok\u0378go'];
    for (const title of titles) await t.make.document(user.id, { title, content: 'Body.' });
    const cases: [string, string[]][] = [
      ['שלום', [titles[0]!]],
      ['مرحبا', [titles[1]!]],
      ['50', [titles[2]!]],
      ['70', [titles[2]!]],
      ['pause', [titles[3]!]],
      ['go', [titles[4]!]],
    ];
    for (const [q, expected] of cases) assert.deepEqual(await found(q), expected, q);
  });

  it('never matches a document by its scope tokens, and reads their mark in text as a space', async () => {
    // Every document has scope tokens of w…, n… or p…: a one-letter term must not match them.
    const { user, found } = await ownWorkspace();
    const marked = `ab${SCOPE_MARK}cd wide`;
    const project = await t.make.project(user.id);
    for (const title of ['Plain notes', marked]) await t.make.document(user.id, { title, content: 'Body.' });
    await t.make.document(user.id, { title: 'In a project', content: 'Body.', projectId: project.id });
    const cases: [string, string[]][] = [
      ['w', [marked]],
      ['n', ['Plain notes']],
      ['p', ['In a project', 'Plain notes']],
      ['ab', [marked]],
      ['cd', [marked]],
      [`ab${SCOPE_MARK}cd`, [marked]],
      [SCOPE_MARK, []],
    ];
    for (const [q, expected] of cases) assert.deepEqual((await found(q)).sort(), expected.sort(), q);
  });

  it('splits queries into words the way the index does', () => {
    // Accents the index's tokenizer removes itself are left to it (FOLDED_BY_FOLIO).
    assert.deepEqual(searchTerms('C++ and "Café"'), ['c', 'and', 'café']);
    assert.deepEqual(searchTerms('🚀 ***'), []);
    assert.deepEqual(searchTerms('naïve NAÏVE'), ['naïve']);
    assert.deepEqual(searchTerms('nai\u0308ve Ελληνικά'), ['naive', 'ελληνικα']);
    assert.deepEqual(searchTerms('\u0301 \u0300'), []);
  });

  it("keeps inside one index word every character the query's word splitting keeps inside a word", () => {
    // The index stores no word positions, so FTS5 refuses a quoted term that
    // its tokenizer would split in two: every character searchTerms keeps in
    // a word must be a word character of the index's tokenizer too.
    const { db, insert } = tokenizerTable('instance');
    const count = db.prepare('SELECT count(*) FROM words').pluck();
    const clear = db.prepare('DELETE FROM t');
    const split: string[] = [];
    let checked = 0;
    for (let from = 0; from <= 0x10ffff; from += 4096) {
      const kept: string[] = [];
      for (let cp = from; cp < from + 4096 && cp <= 0x10ffff; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        const c = String.fromCodePoint(cp);
        if (searchTerms(`a${c}b`).length === 1) kept.push(c);
      }
      if (kept.length === 0) continue;
      insert.run(kept.map((c) => searchText(`a${c}b`)).join(' '));
      if (count.get() !== kept.length) {
        for (const c of kept) {
          clear.run();
          insert.run(searchText(`a${c}b`));
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

describe('letters with a lower and an upper case', () => {
  it('are found in either case, in every script, whatever the case of the document', () => {
    // The tokenizer folds the case of older scripts only; searchText lowers
    // the rest as searchTerms lowers queries.
    const { db, wordsOf } = tokenizerTable('instance');
    const indexed = (text: string) => wordsOf(searchText(text)).join(' ');
    const asked = (q: string) => searchTerms(q).flatMap((term) => wordsOf(term)).join(' ');
    const wrong: string[] = [];
    let cased = 0;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      // A capital with a small letter of its own, one for one both ways
      // (not ı's I, whose small letter is i, nor ᾈ's ἈΙ).
      const small = c.toLowerCase();
      if (!/\p{Lu}|\p{Lt}/u.test(c) || [...small].length !== 1 || small === c || small.toUpperCase() !== c) continue;
      cased++;
      const [lower, upper] = [`a${small}b`, `A${c}B`];
      const words = new Set([indexed(lower), indexed(upper), asked(lower), asked(upper)]);
      if (words.size !== 1) wrong.push(`U+${cp.toString(16).toUpperCase()} ${[...words].join(' / ')}`);
    }
    db.close();
    assert.ok(cased > 1000, `checked ${cased} capitals`);
    assert.deepEqual(wrong, []);
  });
});

describe('combining marks the index folds away', () => {
  it('are all diacritics that searchText removes, so that no query term is made of them alone', () => {
    // The tokenizer reads such a mark alone as the empty word, which as a
    // prefix term would match every document (ftsMatch).
    const { db, wordsOf } = tokenizerTable('row');
    const wrong: string[] = [];
    let marks = 0;
    let foldedAway = 0;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (!/\p{M}/u.test(c)) continue;
      marks++;
      const inWord = wordsOf(`a${c}b`);
      const alone = wordsOf(c);
      if ((inWord.length === 1 && inWord[0] === 'ab') || (alone.length === 1 && alone[0] === '')) {
        foldedAway++;
        if (searchText(`a${c}b`) !== 'ab' || searchTerms(c).length !== 0) wrong.push(`U+${cp.toString(16).toUpperCase()}`);
      }
    }
    db.close();
    assert.ok(marks > 2000, `checked ${marks} marks`);
    assert.ok(foldedAway > 20, `${foldedAway} marks folded away`);
    assert.deepEqual(wrong, []);
  });
});

describe('long runs of combining marks', () => {
  // Arabic fathatan and dammatan, of two combining classes: in this order, normalizing puts each fathatan before the dammatan in front of it.
  const arabic = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? '\u064c' : '\u064b')).join('');
  const astral = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? '\u{10A0F}' : '\u{10A0D}')).join('');

  it('are folded as their first MARK_RUN marks, so that normalizing them never takes time in the square of their length', () => {
    assert.equal(searchText(`x${arabic(5000)} y`), searchText(`x${arabic(MARK_RUN)} y`));
    assert.equal([...searchText(`x${arabic(5000)}`)].length, 1 + MARK_RUN);
    assert.equal(searchText(`x${astral(3000)}y`), searchText(`x${astral(MARK_RUN)}y`));
    assert.equal(foldText(`ｶ${'ﾞ'.repeat(1000)}`), foldText(`ｶ${'ﾞ'.repeat(MARK_RUN)}`));
    assert.equal(shortMarkRuns(`a${arabic(31)}b${astral(31)}c${arabic(MARK_RUN)}`), `a${arabic(MARK_RUN)}b${astral(MARK_RUN)}c${arabic(MARK_RUN)}`);
    assert.deepEqual(searchTerms(`x${arabic(150)}yz`), [searchText(`x${arabic(MARK_RUN)}yz`)]);
  });

  it('are runs of every character whose decomposition begins with a mark normalizing reorders', () => {
    // A character of a combining class other than 0 is reordered before U+0345, of the highest.
    const reordered = (c: string) => c === '\u0345' || `a\u0345${c}`.normalize('NFD') !== `a\u0345${c}`;
    const outside: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      const first = String.fromCodePoint(c.normalize('NFKD').codePointAt(0)!);
      if (reordered(first) && shortMarkRuns(`a${c.repeat(MARK_RUN + 1)}`) === `a${c.repeat(MARK_RUN + 1)}`) outside.push(`U+${cp.toString(16).toUpperCase()}`);
    }
    assert.deepEqual(outside, []);
  });

  it('fold as themselves once folded, runs that decomposing a letter lengthens too', () => {
    // PostgreSQL's words and terms are folded twice, SQLite's once: the two find the same documents only if a second folding changes nothing.
    const changed: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      const last = [...c.normalize('NFKD')].at(-1)!;
      if (!/\p{M}/u.test(last)) continue;
      const folded = foldText(`x ${c}${last.repeat(MARK_RUN)}y`);
      if (foldText(folded) !== folded) changed.push(`U+${cp.toString(16).toUpperCase()}`);
    }
    assert.deepEqual(changed, []);
  });
});

describe('text the index reads as it is', () => {
  it('holds only characters the tokenizer folds as searchText would, alone and side by side', () => {
    const { db, wordsOf } = tokenizerTable('instance');
    const alike: string[] = [];
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (FOLDED_BY_FOLIO.test(c)) continue;
      alike.push(c);
      if (wordsOf(`a${c}b`).join(' ') !== wordsOf(foldText(`a${c}b`)).join(' ')) wrong.push(`U+${cp.toString(16).toUpperCase()}`);
    }
    assert.ok(alike.length > 500, `${alike.length} characters`);
    assert.deepEqual(wrong, []);
    const text = alike.join('');
    assert.deepEqual(wordsOf(foldText(text)), wordsOf(text));
    db.close();
    assert.ok(!FOLDED_BY_FOLIO.test('Crème brûlée, señor Šťastný'));
    assert.ok(FOLDED_BY_FOLIO.test('Ελληνικά') && FOLDED_BY_FOLIO.test('Øre') && FOLDED_BY_FOLIO.test('ﬁ') && FOLDED_BY_FOLIO.test('ß'));
  });
});

describe('search terms no indexed word extends', () => {
  it('are found from the index vocabulary, whose scope tokens extend none, ASCII letters and digits only', () => {
    const db = new Database(':memory:');
    migrate(db);
    const insert = db.prepare('INSERT INTO documents_fts (rowid, title, content, scope) VALUES (?, ?, ?, ?)');
    insert.run(1, 'Plan', 'planning the plant', `${SCOPE_MARK}w61`);
    // A scope token that would extend w61aa but for its mark.
    insert.run(2, 'Zebra', 'b café x100 x1000 w61aa', `${SCOPE_MARK}w61aab`);
    const whole = wholeWords(db);
    const terms = ['plan', 'planning', 'plant', 'zebra', 'zebr', 'zzzz', 'aaaa', 'x100', 'x1000', 'w61a', 'w61aa', 'cafe', 'café', 'b', 'zb', 'zzz', 'the', 'pla', 'x10'];
    // Terms of one or two characters stay prefixes: the index keeps their
    // prefixes. Three-letter ones are asked as longer ones are (migration 16).
    assert.deepEqual([...whole(terms)].sort(), ['aaaa', 'cafe', 'planning', 'plant', 'the', 'w61aa', 'x1000', 'zebra', 'zzz', 'zzzz']);
    assert.equal(ftsMatch(['plan', 'zebra', 'café'], whole(['plan', 'zebra', 'café'])), '("plan"* "zebra" "café"*)');

    // The vocabulary follows the index: a new word extending a term makes it a prefix again.
    insert.run(3, 'Zebras', '', `${SCOPE_MARK}w61`);
    assert.deepEqual([...whole(['zebra', 'zebras'])], ['zebras']);
    db.prepare("INSERT INTO documents_fts (documents_fts, rowid, title, content, scope) VALUES ('delete', 1, 'Plan', 'planning the plant', ?)").run(`${SCOPE_MARK}w61`);
    assert.ok(whole(['plan']).has('plan'), 'the words of a removed document no longer extend a term');
    db.close();
  });

  describe('over HTTP', () => {
    let t: TestContext;
    let key: string;
    let user: string;
    const corpus = new Map<string, string>();
    // Short words over three letters, so that most words extend others.
    const word = fc.stringMatching(/^[abc]{1,6}$/);
    before(async () => {
      t = await setup({ env: { READ_LIMIT_PER_MIN: '1000000' } });
      user = (await t.make.user()).id;
      key = (await t.make.key(user)).secret;
      const texts = fc.sample(fc.array(word, { minLength: 1, maxLength: 6 }), { numRuns: 40, seed: 5 });
      for (const [i, words] of texts.entries()) {
        const doc = await t.make.document(user, { title: `T${i}`, content: words.join(' ') });
        corpus.set(doc.id, `T${i} ${words.join(' ')}`);
        t.clock.advance(1000);
      }
      // Edits leave removed words behind in older index segments.
      for (const [i, id] of [...corpus.keys()].entries()) {
        if (i % 3 !== 0) continue;
        const words = fc.sample(fc.array(word, { minLength: 1, maxLength: 3 }), { numRuns: 1, seed: i })[0]!;
        const now = new Date(t.clock()).toISOString();
        const change = { contentMarkdown: words.join(' '), expectedUpdatedAt: null };
        const outcome = await t.store.updateDocument({ userId: user, orgId: null }, id, change, () => now);
        assert.equal(outcome.status, 'updated');
        corpus.set(id, `T${i} ${words.join(' ')}`);
        t.clock.advance(1000);
      }
    });
    after(() => t.close());

    it('find a word written after an earlier search found none extending it', async () => {
      const ids = async (q: string) =>
        (await call(t.app, 'GET', `/v1/documents?q=${q}&limit=100`, { key })).body.documents.map((d: any) => d.id).sort();
      const first = await t.make.document(user, { title: 'Quokka', content: 'quokkas' });
      assert.deepEqual(await ids('quokkasq'), []);
      assert.deepEqual(await ids('quokkas'), [first.id]);
      const second = await t.make.document(user, { title: 'More', content: 'quokkasque' });
      assert.deepEqual(await ids('quokkas'), [first.id, second.id].sort());
      assert.deepEqual(await ids('quokkasq'), [second.id]);
      corpus.set(first.id, 'Quokka quokkas');
      corpus.set(second.id, 'More quokkasque');
    });

    it('match every document with a word starting with each term, as prefix terms do', async () => {
      const indexed = new Map([...corpus].map(([id, text]) => [id, searchTerms(text)]));
      await fc.assert(
        fc.asyncProperty(fc.array(word, { minLength: 1, maxLength: 3 }), async (terms) => {
          const q = terms.join(' ');
          const res = await call(t.app, 'GET', `/v1/documents?q=${encodeURIComponent(q)}&limit=100`, { key });
          assert.equal(res.status, 200);
          const found = new Set(res.body.documents.map((d: any) => d.id));
          const expected = new Set(
            [...indexed].filter(([, words]) => terms.every((term) => words.some((w) => w.startsWith(term)))).map(([id]) => id),
          );
          assert.deepEqual(found, expected, `q=${q}`);
        }),
        { numRuns: 200 },
      );
    });
  });
});
