import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyEdits, COUNT_LIMIT, headings, NATIVE_NEEDLE, occurrences, outline, OUTLINE_LIMIT, readLines, splitLines } from '../src/domain/markdown.js';

describe('Markdown by lines (get_document)', () => {
  it('counts lines, a final newline closing the last one', () => {
    assert.deepEqual(splitLines('a\nb\n'), ['a', 'b']);
    assert.deepEqual(splitLines('a\nb'), ['a', 'b']);
    assert.deepEqual(splitLines('a\n\n'), ['a', '']);
    assert.deepEqual(splitLines('x'), ['x']);
    assert.deepEqual(splitLines('a\r\nb\r\n'), ['a\r', 'b\r']);
  });

  it('finds ATX headings outside fenced code, without their closing hashes', () => {
    const doc = [
      '# Title',
      'text # not a heading',
      '##No space is not a heading',
      '   ### Indented three ###',
      '    # four spaces is code',
      '```md',
      '# in a fence',
      '~~~',
      '# still in it',
      '```',
      '####### seven is text',
      '## Closing #s stay if glued#',
      '#',
      '~~~~',
      '# tilde fence',
      '~~~~',
      '###### Six\r',
    ];
    assert.deepEqual(headings(doc), [
      { line: 1, level: 1, text: 'Title' },
      { line: 4, level: 3, text: 'Indented three' },
      { line: 12, level: 2, text: 'Closing #s stay if glued#' },
      { line: 13, level: 1, text: '' },
      { line: 17, level: 6, text: 'Six' },
    ]);
  });

  it('takes a line of backticks with a backtick after them for inline code, not a fence that hides the headings below', () => {
    assert.deepEqual(headings(['```js` is inline code', '# Setup', '``` `x`', '## Use']), [
      { line: 2, level: 1, text: 'Setup' },
      { line: 4, level: 2, text: 'Use' },
    ]);
  });

  it('finds no heading in a fence opened on a list item\'s line, which the item\'s end closes', () => {
    const doc = ['- ```sh', '  # install', '  npm ci', '  ```', '# Run', '1. ~~~', '   # a comment', '', '   ~~~', '- ```', '  # code', '## After the item'];
    assert.deepEqual(headings(doc), [
      { line: 5, level: 1, text: 'Run' },
      { line: 12, level: 2, text: 'After the item' },
    ]);
  });

  it('finds no heading inside an HTML block: a comment, a <div> up to the next blank line, a <script>', () => {
    const doc = ['<!--', '# Draft, commented out', '-->', '# Kept', '<div align="center">', '# In the div', '</div>', '', '## After the div',
      '<!-- one line --> # not a heading', '## Next', 'A paragraph', '<span>', '### Not an HTML block after a paragraph', '', '<script>', '# x', '</script>', '#### Last'];
    assert.deepEqual(headings(doc), [
      { line: 4, level: 1, text: 'Kept' },
      { line: 9, level: 2, text: 'After the div' },
      { line: 11, level: 2, text: 'Next' },
      { line: 14, level: 3, text: 'Not an HTML block after a paragraph' },
      { line: 19, level: 4, text: 'Last' },
    ]);
  });

  it('reads long lines of tag attributes in time linear in their length', () => {
    const started = performance.now();
    const attributes = ' b=c'.repeat(100_000);
    assert.deepEqual(headings(['', `<a${attributes} !`, '# x', `<a${" b='x'".repeat(100_000)}!`, '## y']).length, 2);
    assert.ok(performance.now() - started < 2000);
  });

  it('reads long lines of spaces, tabs and hashes as any others (a backtracking pattern took seconds on them)', () => {
    const blanks = ' \t'.repeat(50_000);
    assert.deepEqual(headings([`#${blanks}\r x`, `##${blanks}${'#'.repeat(1000)}`, `#\u2028${blanks}`, `# a${blanks}#${blanks}`]), [
      { line: 1, level: 1, text: 'x' },
      { line: 2, level: 2, text: '' },
      { line: 4, level: 1, text: 'a' },
    ]);
  });

  it('outlines a document of many headings by its top levels, so that the outline stays small whatever the document', () => {
    const doc = (levels: number[]) => levels.map((level, i) => `${'#'.repeat(level)} h${i}`);
    const levelsOf = (lines: string[], limit: number) => outline(lines, limit).headings.map((h) => h.level);
    // All fit: all listed, as headings() finds them.
    const few = doc([2, 3, 1, 3]);
    assert.deepEqual(outline(few, 4), { headings: headings(few), headingCount: 4 });
    // Past the limit the deepest level goes first, then the next, while the rest does not fit.
    const deep = doc([1, 2, 3, 3, 2, 3, 1, 4]);
    assert.deepEqual(levelsOf(deep, 7), [1, 2, 3, 3, 2, 3, 1]);
    assert.deepEqual(levelsOf(deep, 6), [1, 2, 2, 1]);
    assert.deepEqual(levelsOf(deep, 3), [1, 1]);
    assert.deepEqual(outline(deep, 3).headings.map((h) => h.line), [1, 7]);
    assert.equal(outline(deep, 3).headingCount, 8);
    // A top level that alone does not fit: its first ones, whatever level it is.
    assert.deepEqual(outline(doc([2, 3, 2, 2, 3]), 2).headings.map((h) => [h.line, h.level]), [[1, 2], [3, 2]]);
    // A document of nothing but `#` lines, as large as a body may be: the outline is bounded, the count whole.
    const hashes = splitLines('#\n'.repeat(1_700_000));
    const big = outline(hashes);
    assert.equal(big.headingCount, 1_700_000);
    assert.equal(big.headings.length, OUTLINE_LIMIT);
    assert.deepEqual(big.headings.at(-1), { line: OUTLINE_LIMIT, level: 1, text: '' });
  });

  it('lists in an outline only headings of the document, in order, at most the limit, all of them when they fit', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('# a', '## b', '### c', '###### f', 'text', '```', ''), { maxLength: 40 }), fc.nat({ max: 12 }), (lines, limit) => {
        const all = headings(lines);
        const { headings: listed, headingCount } = outline(lines, limit);
        assert.equal(headingCount, all.length);
        assert.ok(listed.length <= limit);
        if (all.length <= limit) assert.deepEqual(listed, all);
        let at = 0;
        for (const h of listed) {
          while (at < all.length && all[at]!.line !== h.line) at++;
          assert.deepEqual(h, all[at], 'a listed heading is one of the document, in order');
        }
        // Whole levels, as many as fit: what is left out is deeper than all that is listed, and its top level would not
        // have fitted; unless the listing is the top level's first `limit`.
        const shown = new Set(listed.map((h) => h.line));
        const left = all.filter((h) => !shown.has(h.line));
        const top = Math.min(...all.map((h) => h.level));
        if (left.length === 0 || (listed.length === limit && listed.every((h) => h.level === top))) return;
        const deepest = Math.max(...listed.map((h) => h.level));
        const next = Math.min(...left.map((h) => h.level));
        assert.ok(next > deepest);
        assert.ok(all.filter((h) => h.level <= next).length > limit);
      }),
    );
  });

  it('reads a range of lines, an end past the last line reading to it', () => {
    const md = 'one\ntwo\nthree\n';
    assert.deepEqual(readLines(md, {}), { ok: true, text: md, lineCount: 3, headings: [], headingCount: 0, startLine: 1, endLine: 3 });
    assert.equal((readLines(md, { startLine: 2 }) as { text: string }).text, 'two\nthree');
    assert.equal((readLines(md, { endLine: 1 }) as { text: string }).text, 'one');
    assert.equal((readLines(md, { startLine: 3, endLine: 99 }) as { text: string }).text, 'three');
    assert.equal(readLines(md, { startLine: 4 }).ok, false);
    assert.equal(readLines(md, { startLine: 3, endLine: 2 }).ok, false);
  });

  it('reads any document back whole from its ranges', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '#', ' ', '\n', '`', '\r') }), fc.nat(), (md, cut) => {
        const all = readLines(md, {});
        if (!all.ok) return false;
        const split = 1 + (cut % all.lineCount);
        const head = readLines(md, { endLine: split });
        const tail = split < all.lineCount ? readLines(md, { startLine: split + 1 }) : null;
        const joined = [head.ok ? head.text : '', ...(tail?.ok ? [tail.text] : [])].join('\n');
        return joined === splitLines(md).join('\n');
      }),
    );
  });
});

describe('long lines (get_document)', () => {
  it('are read by patterns anchored at their start, each tried once per line, never at every character', () => {
    // `/#+$/` is tried at every `#` of a run that does not end the line.
    const long = 100_000;
    const lines = [`# ${'#'.repeat(long)}x`, `## x ${'#'.repeat(long)}`, `### ${' #'.repeat(long)}`, `#### ${'\t'.repeat(long)}#`];
    const unanchored = new Set<string>();
    const exec = RegExp.prototype.exec;
    RegExp.prototype.exec = function (this: RegExp, input: string) {
      if (input.length >= long && !this.source.startsWith('^')) unanchored.add(this.source);
      return exec.call(this, input);
    };
    let found;
    try {
      found = outline(lines);
    } finally {
      RegExp.prototype.exec = exec;
    }
    assert.deepEqual([...unanchored], []);
    assert.deepEqual(
      found.headings.map((h) => [h.level, h.text.length, h.text.slice(-2)]),
      [[1, long + 1, '#x'], [2, 1, 'x'], [3, 2 * long - 3, ' #'], [4, 0, '']],
    );
  });
});

describe('edits (edit_document)', () => {
  it('counts overlapping occurrences', () => {
    assert.equal(occurrences('aaa', 'aa'), 2);
    assert.equal(occurrences('abcabc', 'abc'), 2);
    assert.equal(occurrences('abc', 'd'), 0);
  });

  it('stops counting at COUNT_LIMIT, however long the text and the needle', () => {
    assert.equal(occurrences('a'.repeat(300_000), 'a'.repeat(150_000)), COUNT_LIMIT);
    assert.deepEqual(applyEdits('b'.repeat(1000), [{ oldText: 'bb', newText: '' }]), { ok: false, edit: 0, occurrences: COUNT_LIMIT });
  });

  it('counts a needle longer than NATIVE_NEEDLE as it counts any, overlapping occurrences too', () => {
    // Long runs of one letter, so that the needle's beginning recurs far more often than the needle.
    const runs = fc.array(fc.tuple(fc.nat({ max: 900 }), fc.constantFrom('b', 'c')), { maxLength: 8 });
    const text = runs.map((rs) => rs.map(([n, end]) => 'a'.repeat(n) + end).join(''));
    fc.assert(
      fc.property(text, fc.nat(), fc.integer({ min: NATIVE_NEEDLE + 1, max: 700 }), fc.boolean(), (t, at, length, fromText) => {
        const needle = fromText && t.length > length ? t.slice(at % (t.length - length), (at % (t.length - length)) + length) : 'a'.repeat(length - 1) + 'b';
        let naive = 0;
        for (let i = 0; i <= t.length - needle.length && naive < COUNT_LIMIT; i++) if (t.startsWith(needle, i)) naive++;
        return occurrences(t, needle) === naive;
      }),
    );
    const a = 'a'.repeat(NATIVE_NEEDLE);
    assert.equal(occurrences(`${a}b${a}a${a}b${a}`, `${a}b${a}`), 2);
    assert.deepEqual(applyEdits(`x${a}b${a}y`, [{ oldText: `${a}b${a}`, newText: '-' }]), { ok: true, markdown: 'x-y' });
  });

  it("hands V8's own search no needle longer than NATIVE_NEEDLE, for which its time is the product of the two lengths", () => {
    const lengths: number[] = [];
    const indexOf = String.prototype.indexOf;
    String.prototype.indexOf = function (this: string, search: string, position?: number) {
      lengths.push(String(search).length);
      return indexOf.call(this, search, position);
    };
    try {
      // V8's indexOf compares a needle longer than NATIVE_NEEDLE that differs far from its end in time of the product of the lengths.
      const half = 'a'.repeat(2000);
      assert.deepEqual(applyEdits('a'.repeat(100_000), [{ oldText: `${half}b${half}`, newText: '' }]), { ok: false, edit: 0, occurrences: 0 });
      assert.equal(occurrences(`${half}b${half}`.repeat(3), `${half}b${half}`), 3);
    } finally {
      String.prototype.indexOf = indexOf;
    }
    assert.ok(lengths.length > 0 && Math.max(...lengths) <= NATIVE_NEEDLE, `needles of ${Math.max(...lengths)} characters`);
  });

  it('applies edits in order, each to what the previous left, with `$` as plain text', () => {
    assert.deepEqual(applyEdits('one two three', [
      { oldText: 'two', newText: '2' },
      { oldText: 'one 2', newText: '$& $1 $$' },
    ]), { ok: true, markdown: '$& $1 $$ three' });
  });

  it('refuses at the first edit whose text is missing or ambiguous, applying none', () => {
    assert.deepEqual(applyEdits('a b a', [{ oldText: 'b', newText: 'a' }, { oldText: 'a', newText: 'c' }]), { ok: false, edit: 1, occurrences: 3 });
    assert.deepEqual(applyEdits('a b', [{ oldText: 'z', newText: 'y' }]), { ok: false, edit: 0, occurrences: 0 });
  });

  it('changes exactly the one place it names', () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ minLength: 1 }), fc.string(), fc.string(), (before, old, after, replacement) => {
        const text = before + old + after;
        const result = applyEdits(text, [{ oldText: old, newText: replacement }]);
        if (occurrences(text, old) !== 1) return result.ok === false;
        return result.ok && result.markdown === before + replacement + after;
      }),
    );
  });
});
