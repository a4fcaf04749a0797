declare global {
  interface String {
    /** ES2024, in Node.js since 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/** The part of a JSON Schema that says where a body's fields are. */
export interface FieldSchema {
  properties?: Record<string, FieldSchema>;
  items?: FieldSchema;
}

const pointerStep = (key: string | number) => `/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`;

/** What is wrong with a string of a body, if anything. */
function fault(text: string): string | null {
  if (!text.isWellFormed()) return 'must be Unicode text; it holds a lone surrogate';
  if (text.includes('\u0000')) return 'must not hold the character U+0000';
  return null;
}

/**
 * Request bodies must be text every store keeps as it was sent: a lone
 * surrogate (JSON's `\ud83d` escape alone) cannot be stored as UTF-8, so
 * Folio would answer it back as U+FFFD while the write's own response echoed
 * it; and PostgreSQL's text cannot hold U+0000 at all. Returns the JSON
 * pointer of the first string that holds either among the fields `schema`
 * names, with what is wrong with it, or null; the body validator
 * (validation.ts) refuses it as it refuses a schema's faults. Fields the
 * schema does not name are ignored, as DESIGN §3 wants of unknown fields:
 * neither looked into (however deeply they nest) nor refused.
 */
export function illFormedText(value: unknown, schema: FieldSchema, pointer = ''): { pointer: string; message: string } | null {
  if (typeof value === 'string') {
    const message = fault(value);
    return message === null ? null : { pointer, message };
  }
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    if (schema.items === undefined) return null;
    for (let i = 0; i < value.length; i++) {
      const found = illFormedText(value[i], schema.items, pointer + pointerStep(i));
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, field] of Object.entries(schema.properties ?? {})) {
    if (!Object.hasOwn(value, key)) continue;
    const found = illFormedText((value as Record<string, unknown>)[key], field, pointer + pointerStep(key));
    if (found !== null) return found;
  }
  return null;
}
