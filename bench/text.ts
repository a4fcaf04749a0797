/**
 * Deterministic Markdown for the load benchmark: a vocabulary of a few
 * thousand made-up words whose frequencies follow Zipf's law (a few words are
 * everywhere, most are rare, as in real text), and documents of 1–4 KB.
 */

/** A small, fast, seeded pseudo-random generator (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Random = () => number;

export const int = (rnd: Random, lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
export const pick = <T>(rnd: Random, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

/** Samples ranks 0..n-1 with probability proportional to 1/(rank+1)^s. */
export function zipf(n: number, s: number): (rnd: Random) => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += 1 / Math.pow(i + 1, s);
    cdf[i] = sum;
  }
  for (let i = 0; i < n; i++) cdf[i]! /= sum;
  return (rnd) => {
    const u = rnd();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const ONSETS = ['b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'z', 'br', 'ch', 'cl', 'dr', 'gr', 'pl', 'pr', 'sh', 'st', 'th', 'tr'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io', 'ou'];
const CODAS = ['', '', '', 'n', 'r', 's', 't', 'l', 'm', 'nd', 'st', 'rk'];
const ACCENTED: Record<string, string> = { a: 'á', e: 'é', i: 'í', o: 'ö', u: 'ü' };

export interface Vocabulary {
  /** Words by frequency rank, most frequent first. */
  words: string[];
  /** The same words without diacritics, as the search index folds them. */
  folded: string[];
  /** For each rank, the ranks of the words it is a prefix of (itself included), by folded form. */
  prefixOf: number[][];
}

/**
 * `size` distinct words of 1 to 4 syllables (the shortest are the most
 * frequent); about 3 % carry a diacritic.
 */
export function vocabulary(size: number, rnd: Random): Vocabulary {
  const words: string[] = [];
  const folded: string[] = [];
  const seen = new Set<string>();
  while (words.length < size) {
    const syllables = words.length < 100 ? int(rnd, 1, 2) : int(rnd, 2, 4);
    let w = '';
    for (let i = 0; i < syllables; i++) w += pick(rnd, ONSETS) + pick(rnd, VOWELS) + (i === syllables - 1 ? pick(rnd, CODAS) : '');
    if (w.length < 3 || seen.has(w)) continue;
    seen.add(w);
    folded.push(w);
    words.push(rnd() < 0.03 ? w.replace(/[aeiou]/, (v) => ACCENTED[v]!) : w);
  }
  // A search for w* also finds every word that starts with w.
  const sorted = folded.map((f, rank) => ({ f, rank })).sort((a, b) => (a.f < b.f ? -1 : a.f > b.f ? 1 : 0));
  const prefixOf: number[][] = folded.map((_, rank) => [rank]);
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j]!.f.startsWith(sorted[i]!.f); j++) {
      prefixOf[sorted[i]!.rank]!.push(sorted[j]!.rank);
    }
  }
  return { words, folded, prefixOf };
}

/** The vocabulary's rare tail. */
export const RARE_WORDS = 1000;

const capitalize = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/**
 * Writes Markdown documents from the vocabulary and reports, through `onWord`,
 * every word rank used (so that the caller can count document frequencies
 * without parsing the text back).
 */
export function markdownWriter(vocab: Vocabulary, rnd: Random) {
  // Most words come from the common part of the vocabulary; the last
  // RARE_WORDS are names and jargon that few documents contain.
  const common = vocab.words.length - RARE_WORDS;
  const rank = zipf(common, 1.07);
  const rareRank = zipf(RARE_WORDS, 1.0);
  const use = (r: number, onWord: (r: number) => void) => {
    onWord(r);
    return vocab.words[r]!;
  };
  const word = (onWord: (r: number) => void) => use(rank(rnd), onWord);
  const rare = (onWord: (r: number) => void) => use(common + rareRank(rnd), onWord);
  const phrase = (n: number, onWord: (r: number) => void) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(word(onWord));
    return out.join(' ');
  };

  return {
    title(onWord: (r: number) => void): string {
      return capitalize(phrase(int(rnd, 2, 7), onWord));
    },
    /** Markdown of about `bytes` bytes (1–4 KB in the data set). */
    body(title: string, bytes: number, onWord: (r: number) => void): string {
      const parts: string[] = [`# ${title}\n`];
      let size = title.length + 3;
      while (size < bytes) {
        const kind = rnd();
        let block: string;
        if (kind < 0.12) {
          block = `## ${capitalize(phrase(int(rnd, 2, 5), onWord))}\n`;
        } else if (kind < 0.27) {
          const items: string[] = [];
          for (let i = int(rnd, 2, 5); i > 0; i--) items.push(`- ${phrase(int(rnd, 3, 10), onWord)}`);
          block = `${items.join('\n')}\n`;
        } else if (kind < 0.32) {
          block = `\`\`\`\n${word(onWord)}(${word(onWord)}, ${int(rnd, 0, 999)})\n\`\`\`\n`;
        } else {
          const sentences: string[] = [];
          for (let i = int(rnd, 2, 5); i > 0; i--) {
            let s = capitalize(phrase(int(rnd, 6, 18), onWord));
            if (rnd() < 0.15) s += `, **${word(onWord)}** ${phrase(int(rnd, 1, 4), onWord)}`;
            if (rnd() < 0.05) s += ` [${word(onWord)}](https://example.com/${word(onWord)})`;
            if (rnd() < 0.03) s += ` ${rare(onWord)}`;
            sentences.push(`${s}.`);
          }
          block = `${sentences.join(' ')}\n`;
        }
        parts.push(block);
        size += block.length + 1;
      }
      return parts.join('\n');
    },
  };
}
