import { unstorable } from '../domain/content.js';

/** The part of a JSON Schema that says where a body's fields are. */
export interface FieldSchema {
  properties?: Record<string, FieldSchema>;
  items?: FieldSchema;
}

const pointerStep = (key: string | number) => `/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`;

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
    const message = unstorable(value);
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
