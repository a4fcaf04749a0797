declare global {
  interface String {
    /** ES2024, in Node.js since 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/**
 * Request bodies must be Unicode text: a lone surrogate (JSON's `\ud83d`
 * escape alone) cannot be stored as UTF-8, so Folio would answer it back as
 * U+FFFD (src/store/sqlite/documents.ts) while the write's own response
 * echoed it. Returns the JSON pointer of the first string in a parsed body
 * that holds one, or null; the body validator (app.ts) refuses it as it
 * refuses a schema's faults.
 */
export function illFormedText(value: unknown, pointer = ''): string | null {
  if (typeof value === 'string') return value.isWellFormed() ? null : pointer;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    const found = illFormedText(item, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
    if (found !== null) return found;
  }
  return null;
}
