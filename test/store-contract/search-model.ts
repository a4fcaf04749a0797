import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { searchTerms } from '../../src/domain/search.js';
import { ALL } from './check-view.js';
import { RANDOM_RUNS, useStore, type OpenStore } from './harness.js';
import { at } from './fixtures.js';

/**
 * Random documents written from a small vocabulary (accents, Greek,
 * Cyrillic, search syntax) at random times (ties, a clock that goes back),
 * some of them replaced, listed and searched with random prefixes of its
 * words: the store finds exactly what DESIGN §3's rule, stated plainly in
 * the model (holdsTerms), finds, in its order, and each page is the start
 * of it.
 */

const VOCABULARY = [
  'deploy', 'deployment', 'Déploiement', 'release', 'ΕΛΛΗΝΙΚΆ', 'ελληνικός', 'привет', 'Приветствие', 'naïve', 'NAIVE',
  'façade', 'über', 'Ubermensch', 'zebra', 'zeal', 'x', 'q1', '2026', 'c++', 'AND', 'NEAR(', '"quoted"', '*star*', '-minus',
  'a', 'ab', 'abc', 'abcd', 'Éa', 'éab', 'Ωμ', 'жук', 'жуки', 'is', 'été', '日本語',
];
const SEPARATORS = [' ', ', ', '\n', ' - ', '/', '. '];

const word = fc.constantFrom(...VOCABULARY);
const text = (min: number, max: number) =>
  fc.array(fc.tuple(word, fc.constantFrom(...SEPARATORS)), { minLength: min, maxLength: max }).map((parts) => parts.flat().join('').trim());
/** A prefix of a vocabulary word, in any case. */
const prefix = fc
  .tuple(word, fc.nat(), fc.constantFrom('lower', 'upper', 'as is'))
  .map(([w, n, casing]) => {
    const p = w.slice(0, 1 + (n % w.length));
    return casing === 'lower' ? p.toLowerCase() : casing === 'upper' ? p.toUpperCase() : p;
  });
const query = fc.array(prefix, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(' '));

/** Times from a few seconds, so that they tie, and go back as often as forward. */
const second = fc.integer({ min: 0, max: 12 });

const corpora = fc.record({
  documents: fc.array(fc.record({ title: text(1, 3), content: text(0, 6), at: second }), { minLength: 1, maxLength: 10 }),
  replacements: fc.array(fc.record({ which: fc.nat(), title: fc.option(text(1, 2), { nil: undefined }), content: text(1, 4), at: second }), { maxLength: 4 }),
  queries: fc.array(query, { minLength: 1, maxLength: 6 }),
});

export function searchModelContract(open: OpenStore): void {
  describe('search and order, on random documents', () => {
    const h = useStore(open);

    it('finds exactly the documents holding every term as a word prefix, case and accents aside', async () => {
      await fc.assert(
        fc.asyncProperty(corpora, async ({ documents, replacements, queries }) => {
          const viewer = { userId: (await h.make.user()).id, orgId: null };
          const ids: string[] = [];
          for (const d of documents) ids.push((await h.make.doc(viewer, { title: d.title, contentMarkdown: d.content || '.', now: at(d.at) })).id);
          for (const r of replacements) {
            const outcome = await h.make.update(viewer, ids[r.which % ids.length]!, { title: r.title, contentMarkdown: r.content }, () => at(r.at));
            assert.equal(outcome.status, 'updated');
          }
          for (const q of ['', ...queries]) {
            const terms = searchTerms(q);
            if (q !== '' && terms.length === 0) continue; // the service does not ask the store
            const expected = h.model.visibleDocuments(viewer, { terms }).map((d) => d.id);
            for (const limit of [ALL, 1, 2, 3]) {
              const found = (await h.store.listDocuments(viewer, { limit, terms })).map((d) => d.id);
              assert.deepEqual(found, expected.slice(0, limit), `"${q}" (${JSON.stringify(terms)}), limit ${limit}`);
            }
          }
        }),
        { numRuns: RANDOM_RUNS },
      );
    });
  });
}
