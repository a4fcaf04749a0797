/**
 * A document's Markdown read by its lines, so that an agent can find its
 * sections and read or change a part of it (DESIGN §6).
 *
 * Lines are separated by `\n` (a `\r` before it stays part of its line); a
 * newline at the very end closes the last line rather than opening an
 * empty one, so `"# A\n\ntext\n"` has three lines.
 */

export interface Heading {
  /** 1-based line number. */
  line: number;
  /** 1 for `#`, up to 6. */
  level: number;
  text: string;
}

export function splitLines(markdown: string): string[] {
  const lines = markdown.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The opening of an ATX heading (CommonMark §4.2): up to three spaces, 1–6
 * `#`, then a space, a tab or the end of the line. The rest of the line is
 * read with string operations, not by one pattern: a pattern that also
 * matched the text and a closing run of `#` would backtrack for seconds on
 * a long line of spaces and tabs.
 */
const ATX_OPENING = /^ {0,3}(#{1,6})(?=[ \t]|\r?$)/;

/**
 * A heading's text: the rest of its line, trimmed, without a closing run of
 * `#` that follows a space (or stands alone). The line's end is read by
 * string operations: a pattern such as `/#+$/` is tried at every `#` of a
 * run that does not end the line, in time of the square of the run's length.
 */
function headingText(rest: string): string {
  const text = (rest.endsWith('\r') ? rest.slice(0, -1) : rest).trim();
  let closing = 0;
  while (text[text.length - 1 - closing] === '#') closing++;
  if (closing === 0) return text;
  const before = text.slice(0, text.length - closing);
  return before === '' || before.endsWith(' ') || before.endsWith('\t') ? before.trim() : text;
}

/**
 * The opening of a fenced code block (CommonMark §4.5): up to three spaces,
 * then a run of at least three backticks or tildes; or the same right after
 * a list item's marker (`- `, `1. `), whose lines it then holds as far as
 * they are indented under the item's text. Inside one, `#` starts no heading.
 */
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ITEM_FENCE = /^ {0,3}(?:[-+*]|[0-9]{1,9}[.)]) {1,4}(`{3,}|~{3,})/;

/** The closing line of a fenced code block: the fence's character, at least as many, and nothing but spaces after. */
const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*\r?$/;

interface Fence {
  marker: string;
  /** Columns of indentation its lines keep: 0 at the top level, the item text's column inside a list item. */
  indent: number;
}

/** The fenced code block a line opens, if any. A backtick fence's info string holds no backtick: "```a`b" is inline code. */
function fenceOpening(line: string): Fence | null {
  for (const [pattern, inItem] of [[FENCE, false], [ITEM_FENCE, true]] as const) {
    const m = pattern.exec(line);
    if (!m) continue;
    const marker = m[1]!;
    if (marker[0] === '`' && line.includes('`', m[0].length)) return null;
    return { marker, indent: inItem ? m[0].length - marker.length : 0 };
  }
  return null;
}

/** Whether a line indented less than `indent` columns ends the list item, and with it the fence (blank lines do not). */
const leavesItem = (line: string, indent: number) => indent > 0 && line.trim() !== '' && !line.startsWith(' '.repeat(indent));

/** Whether a line closes `fence`: the same character, at least as many, at most three spaces past the fence's indentation. */
function closes(line: string, fence: Fence): boolean {
  if (!line.startsWith(' '.repeat(fence.indent))) return false;
  const marker = CLOSING_FENCE.exec(line.slice(fence.indent))?.[1];
  return marker !== undefined && marker[0] === fence.marker[0] && marker.length >= fence.marker.length;
}

/** The tag names that open an HTML block ending at a blank line (CommonMark §4.6, its 6th kind). */
const BLOCK_TAGS = new Set(
  ('address article aside base basefont blockquote body caption center col colgroup dd details dialog dir div dl dt fieldset ' +
    'figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu ' +
    'menuitem nav noframes ol optgroup option p param search section summary table tbody td tfoot th thead title tr track ul').split(' '),
);

/** The HTML blocks that end on a line holding a given text, by how they start. */
const RAW_BLOCKS: readonly [RegExp, RegExp][] = [
  [/^ {0,3}<(?:script|pre|style|textarea)(?:[ \t>]|\r?$)/i, /<\/(?:script|pre|style|textarea)>/i],
  [/^ {0,3}<!--/, /-->/],
  [/^ {0,3}<\?/, /\?>/],
  [/^ {0,3}<![A-Za-z]/, />/],
  [/^ {0,3}<!\[CDATA\[/, /\]\]>/],
];

const BLOCK_TAG = /^ {0,3}<\/?([A-Za-z][A-Za-z0-9]*)(?:[ \t>]|\/>|\r?$)/;

/** A line of one complete open or closing tag, which starts an HTML block when no paragraph goes on before it (the 7th kind). */
const LONE_TAG =
  /^ {0,3}(?:<[A-Za-z][A-Za-z0-9-]*(?:[ \t]+[A-Za-z_:][A-Za-z0-9_.:-]*(?:[ \t]*=[ \t]*(?:[^ \t"'=<>`]+|'[^']*'|"[^"]*"))?)*[ \t]*\/?>|<\/[A-Za-z][A-Za-z0-9-]*[ \t]*>)[ \t]*\r?$/;

const isBlank = (line: string) => line.trim() === '';

/**
 * The end of the HTML block a line opens (CommonMark §4.6), if it opens
 * one: a text that ends it on the line holding it, or a blank line.
 * Inside an HTML block, `#` starts no heading. A paragraph's next line
 * opens none of the 7th kind.
 */
function htmlOpening(line: string, inParagraph: boolean): RegExp | 'blank' | null {
  for (const [start, end] of RAW_BLOCKS) if (start.test(line)) return end;
  const tag = BLOCK_TAG.exec(line)?.[1];
  if (tag !== undefined && BLOCK_TAGS.has(tag.toLowerCase())) return 'blank';
  if (!inParagraph && LONE_TAG.test(line) && !/^ {0,3}<\/?(?:script|pre|style|textarea)\b/i.test(line)) return 'blank';
  return null;
}

/** Calls `visit` for each ATX heading of a document, outside fenced code blocks and HTML blocks, in order, with its line's index and its level; `rest` is the line after the `#` run. */
function eachHeading(lines: readonly string[], visit: (index: number, level: number, rest: string) => void): void {
  let fence: Fence | null = null;
  let html: RegExp | 'blank' | null = null;
  let inParagraph = false;
  lines.forEach((line, index) => {
    if (fence !== null) {
      if (!leavesItem(line, fence.indent)) {
        if (closes(line, fence)) fence = null;
        return;
      }
      fence = null;
    }
    if (html !== null) {
      if (html === 'blank' ? isBlank(line) : html.test(line)) html = null;
      return;
    }
    fence = fenceOpening(line);
    if (fence !== null) {
      inParagraph = false;
      return;
    }
    html = htmlOpening(line, inParagraph);
    if (html !== null) {
      // A block of the first five kinds may end on the line that opens it.
      if (html !== 'blank' && html.test(line)) html = null;
      inParagraph = false;
      return;
    }
    const m = ATX_OPENING.exec(line);
    if (m) visit(index, m[1]!.length, line.slice(m[0].length));
    inParagraph = !m && !isBlank(line);
  });
}

/** The ATX headings of a document, outside fenced code blocks and HTML blocks, in order. */
export function headings(lines: readonly string[]): Heading[] {
  const found: Heading[] = [];
  eachHeading(lines, (index, level, rest) => found.push({ line: index + 1, level, text: headingText(rest) }));
  return found;
}

/** The most headings an outline lists. */
export const OUTLINE_LIMIT = 1000;

/**
 * A document's outline: its headings, as `headings` finds them, and how many
 * there are. Past `limit`, it lists the top levels that fit together (the
 * deepest are left out first), or the top level's first `limit` when that
 * level alone does not fit: listed whole, a document of little but `#`
 * lines would be answered with dozens of times its own size.
 */
export function outline(lines: readonly string[], limit = OUTLINE_LIMIT): { headings: Heading[]; headingCount: number } {
  const perLevel = [0, 0, 0, 0, 0, 0, 0];
  const found: Heading[] = [];
  eachHeading(lines, (index, level, rest) => {
    perLevel[level]! += 1;
    if (found.length <= limit) found.push({ line: index + 1, level, text: headingText(rest) });
  });
  const headingCount = found.length <= limit ? found.length : perLevel.reduce((a, b) => a + b);
  if (headingCount <= limit) return { headings: found, headingCount };
  let listed = 0;
  let deepest = perLevel.findIndex((n) => n > 0);
  for (let level = 1, above = 0; level <= 6; level++) {
    above += perLevel[level]!;
    if (above <= limit) deepest = Math.max(deepest, level);
  }
  const kept: Heading[] = [];
  eachHeading(lines, (index, level, rest) => {
    if (level <= deepest && listed++ < limit) kept.push({ line: index + 1, level, text: headingText(rest) });
  });
  return { headings: kept, headingCount };
}

/**
 * The outline of a document and, when a range is asked for, its lines from
 * `startLine` to `endLine` (1-based, inclusive; an end past the last line
 * reads to the last line). A range that starts past the last line, or ends
 * before it starts, is refused with a message for the caller.
 */
export function readLines(
  markdown: string,
  range: { startLine?: number; endLine?: number },
): { ok: true; text: string; lineCount: number; headings: Heading[]; headingCount: number; startLine: number; endLine: number } | { ok: false; message: string } {
  const lines = splitLines(markdown);
  const lineCount = lines.length;
  const whole = range.startLine === undefined && range.endLine === undefined;
  const startLine = range.startLine ?? 1;
  const endLine = Math.min(range.endLine ?? lineCount, lineCount);
  if (startLine > lineCount) return { ok: false, message: `startLine: the document has ${lineCount} lines; startLine ${startLine} is past its end.` };
  if (range.endLine !== undefined && range.endLine < startLine) return { ok: false, message: `endLine: must not be before startLine (${startLine}).` };
  const text = whole ? markdown : lines.slice(startLine - 1, endLine).join('\n');
  return { ok: true, text, lineCount, ...outline(lines), startLine, endLine };
}

/** One change of `edit_document`: `oldText` (found exactly once) becomes `newText`. */
export interface TextEdit {
  oldText: string;
  newText: string;
}

/** How far `occurrences` counts: past it, an edit's text is ambiguous enough to say "at least". */
export const COUNT_LIMIT = 100;

/**
 * The longest needle handed to V8's own search (indexOf). V8 builds its
 * skip tables from a needle's last 250 characters only: a longer needle
 * that differs from the text further from its end (an oldText of `a`s with
 * a `b` in the middle, in a document of `a`s) is compared in time of the
 * product of the two lengths.
 */
export const NATIVE_NEEDLE = 250;

/**
 * Where `needle` first occurs in `text` (-1 if nowhere) and how many times,
 * overlapping occurrences counted (in `aaa`, `aa` occurs twice), up to
 * COUNT_LIMIT: counting them all would take time in the product of the two
 * lengths for text like `aaaa…`. A needle longer than NATIVE_NEEDLE is
 * looked for by its first NATIVE_NEEDLE characters, each place they occur
 * checked whole; once those checks have compared as many characters as the
 * text holds, the rest is left to a search whose time is linear in both
 * (firstOccurrences).
 */
function find(text: string, needle: string): { first: number; count: number } {
  const long = needle.length > NATIVE_NEEDLE;
  const head = long ? needle.slice(0, NATIVE_NEEDLE) : needle;
  let first = -1;
  let count = 0;
  let compared = 0;
  for (let at = text.indexOf(head); at !== -1 && count < COUNT_LIMIT; at = text.indexOf(head, at + 1)) {
    if (long) {
      compared += needle.length;
      if (compared > text.length) return firstOccurrences(text, needle);
      if (!text.startsWith(needle, at)) continue;
    }
    if (first === -1) first = at;
    count++;
  }
  return { first, count };
}

/** find's answer by Knuth, Morris and Pratt's search, in time linear in both lengths: for each length of the needle's beginnings, the longest that is also their end. */
function firstOccurrences(text: string, needle: string): { first: number; count: number } {
  const border = new Int32Array(needle.length);
  for (let i = 1, k = 0; i < needle.length; i++) {
    const c = needle.charCodeAt(i);
    while (k > 0 && c !== needle.charCodeAt(k)) k = border[k - 1]!;
    if (c === needle.charCodeAt(k)) k++;
    border[i] = k;
  }
  let first = -1;
  let count = 0;
  for (let i = 0, k = 0; i < text.length && count < COUNT_LIMIT; i++) {
    const c = text.charCodeAt(i);
    while (k > 0 && c !== needle.charCodeAt(k)) k = border[k - 1]!;
    if (c === needle.charCodeAt(k)) k++;
    if (k === needle.length) {
      if (first === -1) first = i + 1 - k;
      count++;
      k = border[k - 1]!;
    }
  }
  return { first, count };
}

/** How many times `needle` occurs in `text`, overlapping occurrences counted, up to COUNT_LIMIT (find). */
export function occurrences(text: string, needle: string): number {
  return find(text, needle).count;
}

/**
 * Applies `edits` in order, each to the text the previous ones left. Each
 * `oldText` must occur exactly once in that text, so that an edit never
 * lands somewhere its author did not mean; otherwise nothing is applied and
 * the answer names the first edit that failed and how often its text occurs.
 */
export function applyEdits(
  markdown: string,
  edits: readonly TextEdit[],
): { ok: true; markdown: string } | { ok: false; edit: number; occurrences: number } {
  let text = markdown;
  for (const [index, { oldText, newText }] of edits.entries()) {
    const { first, count } = find(text, oldText);
    if (count !== 1) return { ok: false, edit: index, occurrences: count };
    text = text.slice(0, first) + newText + text.slice(first + oldText.length);
  }
  return { ok: true, markdown: text };
}
