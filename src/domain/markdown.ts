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

/** A heading's text: the rest of its line, trimmed, without a closing run of `#` that follows a space (or stands alone). */
function headingText(rest: string): string {
  const text = rest.replace(/\r$/, '').trim();
  const closing = text.length - text.replace(/#+$/, '').length;
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

/** The ATX headings of a document, outside fenced code blocks, in order. */
export function headings(lines: readonly string[]): Heading[] {
  const found: Heading[] = [];
  let fence: Fence | null = null;
  lines.forEach((line, index) => {
    if (fence !== null) {
      if (!leavesItem(line, fence.indent)) {
        if (closes(line, fence)) fence = null;
        return;
      }
      fence = null;
    }
    fence = fenceOpening(line);
    if (fence !== null) return;
    const m = ATX_OPENING.exec(line);
    if (m) found.push({ line: index + 1, level: m[1]!.length, text: headingText(line.slice(m[0].length)) });
  });
  return found;
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
): { ok: true; text: string; lineCount: number; headings: Heading[]; startLine: number; endLine: number } | { ok: false; message: string } {
  const lines = splitLines(markdown);
  const lineCount = lines.length;
  const whole = range.startLine === undefined && range.endLine === undefined;
  const startLine = range.startLine ?? 1;
  const endLine = Math.min(range.endLine ?? lineCount, lineCount);
  if (startLine > lineCount) return { ok: false, message: `startLine: the document has ${lineCount} lines; startLine ${startLine} is past its end.` };
  if (range.endLine !== undefined && range.endLine < startLine) return { ok: false, message: `endLine: must not be before startLine (${startLine}).` };
  const text = whole ? markdown : lines.slice(startLine - 1, endLine).join('\n');
  return { ok: true, text, lineCount, headings: headings(lines), startLine, endLine };
}

/** One change of `edit_document`: `oldText` (found exactly once) becomes `newText`. */
export interface TextEdit {
  oldText: string;
  newText: string;
}

/** How far `occurrences` counts: past it, an edit's text is ambiguous enough to say "at least". */
export const COUNT_LIMIT = 100;

/**
 * How many times `needle` occurs in `text`, overlapping occurrences counted
 * (in `aaa`, `aa` occurs twice), up to COUNT_LIMIT: counting them all would
 * take time in the product of the two lengths for text like `aaaa…`.
 */
export function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1 && count < COUNT_LIMIT; at = text.indexOf(needle, at + 1)) count++;
  return count;
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
    const count = occurrences(text, oldText);
    if (count !== 1) return { ok: false, edit: index, occurrences: count };
    const at = text.indexOf(oldText);
    text = text.slice(0, at) + newText + text.slice(at + oldText.length);
  }
  return { ok: true, markdown: text };
}
