/**
 * Searches for every three-letter prefix (`--length`) of the words in the
 * search index of a data set made by `npm run bench`, for each caller,
 * through Fastify's `inject` on a copy of it: what a term of three letters
 * costs, now that the search
 * index keeps no prefix lists of that length (migration 16). Prints the
 * best of `--tries` times of each search, as percentiles over all of them,
 * and the number of documents found (the same for any index that keeps
 * DESIGN §3's semantics).
 *
 *   taskset -c 0 npx tsx bench/prefix-searches.ts [--docs 100000] [--length 3] [--tries 3]
 */
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { SCOPE_MARK } from '../src/domain/search.js';
import { appOnCopy } from './app-on-copy.js';
import { scoped } from './scenarios.js';

const { values: args } = parseArgs({
  options: {
    docs: { type: 'string', default: '100000' },
    length: { type: 'string', default: '3' },
    tries: { type: 'string', default: '3' },
  },
});
const length = Number(args.length);
const tries = Number(args.tries);

const { app, manifest, file, close } = await appOnCopy(args.docs);

try {
  // The index's own words (as folded when indexed), its scope tokens left out.
  const raw = new Database(file, { readonly: true });
  raw.exec('CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, documents_fts, row)');
  const words = (raw.prepare('SELECT term FROM temp.words').pluck().all() as string[]).filter((w) => !w.startsWith(SCOPE_MARK));
  raw.close();
  const prefixes = [...new Set(words.map((w) => [...w]).filter((w) => w.length >= length).map((w) => w.slice(0, length).join('')))].sort();
  const times: number[] = [];
  let found = 0;
  for (const caller of manifest.callers) {
    for (const prefix of prefixes) {
      let best = Infinity;
      for (let i = 0; i < tries; i++) {
        const started = process.hrtime.bigint();
        const res = await app.inject({
          method: 'GET',
          url: scoped(`/v1/documents?q=${encodeURIComponent(prefix)}`, caller),
          headers: { authorization: `Bearer ${caller.key}` },
        });
        best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
        if (res.statusCode !== 200) throw new Error(`${prefix}: ${res.statusCode} ${res.body}`);
        if (i === 0) found += (res.json() as { count: number }).count;
      }
      times.push(best);
    }
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
  console.log(
    `${prefixes.length} prefixes of ${length} letters × ${manifest.callers.length} callers: ` +
      `p50 ${at(0.5)} ms, p90 ${at(0.9)}, p99 ${at(0.99)}, at most ${at(1)}; ${found} documents found`,
  );
} finally {
  await close();
}
