/**
 * A document's Markdown must hold a character other than whitespace (the
 * spec's `contentMarkdown` rule), whitespace as Unicode defines it (the
 * White_Space property): U+0085 NEXT LINE is whitespace and U+FEFF, a byte
 * order mark, is not, where JavaScript's `\s` reads both the other way. The
 * request schemas' pattern (ajv compiles patterns as Unicode expressions)
 * and the command line's check.
 */
export const NON_WHITESPACE = '\\P{White_Space}';

const NON_WHITESPACE_RE = new RegExp(NON_WHITESPACE, 'u');

export const hasNonWhitespace = (text: string): boolean => NON_WHITESPACE_RE.test(text);

declare global {
  interface String {
    /** ES2024, in Node.js since 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/**
 * What keeps a text from being stored as it was given, if anything: a lone
 * surrogate cannot be stored as UTF-8 (it would be read back as U+FFFD),
 * and PostgreSQL's text cannot hold U+0000 at all. The API's bodies
 * (src/http/well-formed-text.ts) and the command line's inputs are refused
 * alike, so that both databases keep the same texts.
 */
export function unstorable(text: string): string | null {
  if (!text.isWellFormed()) return 'must be Unicode text; it holds a lone surrogate';
  if (text.includes('\u0000')) return 'must not hold the character U+0000';
  return null;
}
