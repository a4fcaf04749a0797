import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Kind } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { DateTime, NullableDateTime, NullableString } from '../src/api/common.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

describe('schema building blocks', () => {
  it('NullableString is a JSON Schema type list accepting a string or null, not a TypeBox String', () => {
    const schema = NullableString(DateTime, { description: 'When.' });
    assert.deepEqual(schema.type, ['string', 'null']);
    assert.equal(schema.format, 'date-time');
    assert.equal(schema.description, 'When.');
    const ajv = addFormats(new Ajv({ strict: false }));
    for (const s of [schema, NullableDateTime, NullableString()]) {
      // TypeBox would read a schema of kind String as refusing null.
      assert.notEqual((s as unknown as Record<symbol, unknown>)[Kind], 'String');
      const check = ajv.compile(s);
      assert.equal(check(null), true);
      assert.equal(check('2026-05-04T09:30:00.000Z'), true);
      assert.equal(check(5), false);
    }
    assert.equal(ajv.compile(NullableDateTime)('yesterday'), false);
  });
});
