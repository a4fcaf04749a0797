import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MARK_RUN, searchTerms } from '../../src/domain/search.js';
import type { Viewer } from '../../src/domain/visibility.js';
import { ALL } from './check-view.js';
import { useStore, type OpenStore } from './harness.js';
import type { DocumentModel } from './model.js';

/**
 * DESIGN §3's search, through listDocuments with the terms searchTerms
 * makes of a query: every term required, as a whole word or a word prefix,
 * in title or content, case and accents aside, any typed characters read
 * as text, and only what the viewer may see.
 */

const TEXTS = {
  deployment: ['Deployment checklist', 'Roll out the release to production.'],
  deployNote: ['Friday notes', 'We deploy on Fridays, never on Mondays.'],
  greek: ['Ελληνικά κείμενα', 'Καλημέρα κόσμε'],
  cyrillic: ['Заметки', 'привет мир'],
  cafe: ['Café crème', 'Naïve façade'],
  syntax: ['Syntax soup', 'c++ AND NEAR(x, y) -x "quoted" star* a:b {col} ^caret'],
  quartz: ['Xylophone quartz', 'zebra'],
} as const;
type Key = keyof typeof TEXTS;

/** What a query must find (in DESIGN §3's order), stated by hand. */
const CASES: [query: string, found: Key[]][] = [
  ['deploy', ['deployment', 'deployNote']],
  ['DEPLOY', ['deployment', 'deployNote']],
  ['ploy', []],
  ['deployment checklist', ['deployment']],
  ['deploy fridays', ['deployNote']],
  ['deploy zebra', []],
  ['release', ['deployment']],
  ['ελληνικα', ['greek']],
  ['ΕΛΛΗΝΙΚΆ', ['greek']],
  ['καλημερα', ['greek']],
  ['ПРИВЕТ', ['cyrillic']],
  ['прив', ['cyrillic']],
  ['ривет', []],
  ['заметки мир', ['cyrillic']],
  ['cafe', ['cafe']],
  ['CAFÉ creme', ['cafe']],
  ['naive facade', ['cafe']],
  ['r', ['deployment']],
  ['de', ['deployment', 'deployNote']],
  ['dep', ['deployment', 'deployNote']],
  ['depl', ['deployment', 'deployNote']],
  ['κ', ['greek']],
  ['ελλ', ['greek']],
  ['м', ['cyrillic']],
  ['за', ['cyrillic']],
  ['caf', ['cafe']],
  ['q', ['syntax', 'quartz']],
  ['xy', ['quartz']],
  ['xyl', ['quartz']],
  ['zebr', ['quartz']],
  ['quartzes', []],
  ['x', ['syntax', 'quartz']],
  ['c++', ['deployment', 'cafe', 'syntax']],
  ['NEAR(', ['syntax']],
  ['AND', ['syntax']],
  ['-x', ['syntax', 'quartz']],
  ['"quoted', ['syntax']],
  ['star*', ['syntax']],
  ['uoted', []],
];

/** Queries of characters that mean something to search engines: never an error, and found as text. */
const TYPED = ['"', '*', 'AND', 'OR', 'NOT', 'NEAR', 'NEAR(x', 'NEAR(x, y)', '-', '-deploy', '+deploy', 'c++', '😀', '🚀 deploy', '(', ')', "'", '""', 'a:b', 'col:deploy', '{col}', '^caret', 'deploy*', 'de*', '"deploy', 'x AND y', 'ﬁle', '\\', '%', '_', "deploy' OR '1'='1"];

export function searchContract(open: OpenStore): void {
  describe('search', () => {
    const h = useStore(open);
    const found = {} as Record<Key, string>;
    let me: Viewer;
    let other: Viewer;

    const search = async (viewer: Viewer, q: string, projectId?: string) =>
      (await h.store.listDocuments(viewer, { limit: ALL, terms: searchTerms(q), projectId })).map((d) => d.id);
    const expected = (viewer: Viewer, q: string, projectId?: string) =>
      h.model.visibleDocuments(viewer, { terms: searchTerms(q), projectId }).map((d) => d.id);

    before(async () => {
      me = { userId: (await h.make.user()).id, orgId: null };
      other = { userId: (await h.make.user()).id, orgId: null };
      for (const [key, [title, contentMarkdown]] of Object.entries(TEXTS) as [Key, readonly [string, string]][]) {
        found[key] = (await h.make.doc(me, { title, contentMarkdown })).id;
      }
      // The same words elsewhere: another user's document, and a team's that `me` is not in.
      const everything = Object.values(TEXTS).flat().join('\n');
      await h.make.doc(other, { title: 'Not yours', contentMarkdown: everything });
      const team = await h.make.org();
      await h.make.member(team.id, other.userId);
      await h.make.doc({ ...other, orgId: team.id }, { title: 'Not yours either', contentMarkdown: everything });
    });

    for (const [query, keys] of CASES) {
      it(`finds ${keys.length === 0 ? 'nothing' : keys.join(', ')} for "${query}"`, async () => {
        const want = h.model.visibleDocuments(me).filter((d) => keys.some((k) => found[k] === d.id));
        assert.deepEqual(await search(me, query), want.map((d) => d.id));
      });
    }

    it('reads any typed characters as text, never as an error', async () => {
      for (const query of TYPED) {
        if (searchTerms(query).length === 0) continue; // the service does not ask the store
        assert.deepEqual(await search(me, query), expected(me, query), `"${query}"`);
      }
    });

    it("never shows another user's matching documents, which they find", async () => {
      for (const [query] of CASES) assert.deepEqual(await search(other, query), expected(other, query), `"${query}" as the other user`);
      assert.equal((await search(other, 'deploy')).length, 1);
    });

    // The tests below write documents of their own user's, which the cases above never see.
    const someone = async (): Promise<Viewer> => ({ userId: (await h.make.user()).id, orgId: null });

    it('finds the new text after an update, and not the old', async () => {
      const me = await someone();
      const doc = await h.make.doc(me, { title: 'Firstheading', contentMarkdown: 'oldtextword stays' });
      assert.deepEqual(await search(me, 'oldtextword'), [doc.id]);
      assert.equal((await h.make.update(me, doc.id, { title: 'Renamedheading', contentMarkdown: 'newtextword stays' })).status, 'updated');
      for (const [q, hits] of [['oldtextword', []], ['firsthead', []], ['newtextword', [doc.id]], ['renamedhead', [doc.id]], ['stays', [doc.id]]] as const) {
        assert.deepEqual(await search(me, q), hits, q);
      }
      assert.equal((await h.make.update(me, doc.id, { contentMarkdown: 'thirdtextword' })).status, 'updated');
      assert.deepEqual(await search(me, 'newtextword'), []);
      assert.deepEqual(await search(me, 'renamedheading thirdtext'), [doc.id], 'the title kept is still found');
    });

    it('searches within a project', async () => {
      const me = await someone();
      const project = await h.make.project(me.userId);
      const inside: DocumentModel[] = [];
      for (let i = 0; i < 3; i++) inside.push(await h.make.doc(me, { contentMarkdown: `projword ${i}`, projectId: project.id }));
      await h.make.doc(me, { contentMarkdown: 'projword outside' });
      const theirs = await h.make.project(other.userId);
      await h.make.doc(other, { contentMarkdown: 'projword theirs', projectId: theirs.id });
      assert.deepEqual(await search(me, 'projword', project.id), [...inside].reverse().map((d) => d.id));
      assert.deepEqual(await search(me, 'projword 1', project.id), [inside[1]!.id]);
      assert.equal((await search(me, 'projword')).length, 4);
      assert.deepEqual(await search(me, 'projword', theirs.id), [], "another user's project shows nothing");
      assert.deepEqual(await search(other, 'projword', theirs.id), expected(other, 'projword', theirs.id));
    });

    it("finds only the viewer's documents whether a word is in a few documents or in many", async () => {
      // A store may plan a search by how many documents hold its words
      // (SQLite's FEW_MATCHES): each word here is in either side of any
      // such line, mostly in documents the viewer cannot see.
      const me = await someone();
      const team = await h.make.org();
      await h.make.member(team.id, me.userId);
      await h.make.member(team.id, other.userId);
      const inTeam = { ...me, orgId: team.id };
      const project = await h.make.project(other.userId);
      await h.make.share(project.id, me.userId);
      const mine = [
        await h.make.doc(me, { contentMarkdown: 'manyword fewword' }),
        await h.make.doc(other, { contentMarkdown: 'manyword fewword shared', projectId: project.id }),
        await h.make.doc(inTeam, { contentMarkdown: 'manyword fewword team' }),
      ];
      for (let i = 0; i < 80; i++) {
        await h.make.doc(i % 2 === 0 ? other : { ...other, orgId: team.id }, { contentMarkdown: `manyword ${i % 10 === 0 ? 'fewword' : ''}` });
      }
      await h.make.doc(me, { contentMarkdown: 'manyword last' });
      for (const viewer of [me, inTeam, other]) {
        for (const q of ['manyword', 'fewword', 'manyword fewword', 'fewword many', 'manyword fewword shared']) {
          assert.deepEqual(await search(viewer, q), expected(viewer, q), `"${q}"`);
          const page = (await h.store.listDocuments(viewer, { limit: 2, terms: searchTerms(q) })).map((d) => d.id);
          assert.deepEqual(page, expected(viewer, q).slice(0, 2), `"${q}", first page`);
        }
        assert.deepEqual(await search(viewer, 'fewword', project.id), expected(viewer, 'fewword', project.id));
      }
      assert.deepEqual(await search(me, 'fewword'), [mine[1]!.id, mine[0]!.id]);
      assert.deepEqual(await search(inTeam, 'fewword'), [mine[2]!.id]);
      assert.equal((await search(other, 'manyword')).length, 41);
    });

    it('stores, reads back, replaces and finds a document of very many distinct words in a large alphabet', async () => {
      // A list of 150,000 Chinese names (a surname and two given
      // characters), well within what a request may carry, whose words
      // begin with 150,000 distinct pairs of letters. A store with a limit
      // on a document's words must keep within it, not refuse the document.
      const me = await someone();
      const letter = (i: number) => String.fromCharCode(0x4e00 + i);
      const names = (surnames: number) =>
        Array.from({ length: 150_000 }, (_, i) => letter(i % surnames) + letter(100 + (Math.floor(i / surnames) % 1500)) + letter(2000 + ((i * 7) % 1500))).join('\n');
      const first = names(100);
      const doc = await h.make.doc(me, { title: 'Names', contentMarkdown: first });
      assert.equal((await h.store.getDocument(me, doc.id))?.contentMarkdown, first);
      assert.deepEqual(await search(me, letter(0)), [doc.id], 'found by a first letter');
      const second = names(101);
      assert.equal((await h.make.update(me, doc.id, { contentMarkdown: second })).status, 'updated');
      assert.equal((await h.store.getDocument(me, doc.id))?.contentMarkdown, second);
      assert.deepEqual(await search(me, letter(100)), [doc.id], 'found by a first letter of the new text');
    });

    it('finds a word holding a long run of combining marks by the word as typed, and by its beginning', async () => {
      // Normalizing such a run took time in the square of its length; the index keeps its first MARK_RUN marks (foldText).
      const me = await someone();
      const marks = Array.from({ length: 150 }, (_, i) => (i % 2 === 0 ? '\u064c' : '\u064b')).join('');
      const doc = await h.make.doc(me, { title: 'Marks', contentMarkdown: `before x${marks}yz after` });
      assert.deepEqual(await search(me, `x${marks}yz`), [doc.id]);
      assert.deepEqual(await search(me, `x${marks}`), [doc.id]);
      assert.deepEqual(await search(me, `x${marks} after`), [doc.id]);
      assert.deepEqual(await search(me, `x${marks}yzz`), []);
    });

    it('reads a run of marks after a letter that decomposes into one more as the same run, typed either way', async () => {
      // क़ is क and a nukta: decomposed, its run of nuktas is one longer than typed, and both stores must cut it alike.
      const me = await someone();
      const nuktas = '\u093c'.repeat(MARK_RUN);
      const doc = await h.make.doc(me, { title: 'Nuktas', contentMarkdown: `before \u0958${nuktas}x after` });
      assert.deepEqual(await search(me, `\u0958${nuktas}x`), [doc.id]);
      assert.deepEqual(await search(me, `\u0915${nuktas}x`), [doc.id]);
    });

    it('treats empty terms as no search', async () => {
      const all = h.model.visibleDocuments(me).map((d) => d.id);
      assert.deepEqual((await h.store.listDocuments(me, { limit: ALL, terms: [] })).map((d) => d.id), all);
    });
  });
}
