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
