import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { illFormedText, type FieldSchema } from './well-formed-text.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * A UUID is its 36 characters, in either case (RFC 4122 reads them without
 * regard to case); ajv-formats would also take a `urn:uuid:` prefix.
 */
function withUuids(ajv: Ajv): Ajv {
  return ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
}

/**
 * Input validation: query strings and paths are text, so their values are
 * coerced to the schema's types; JSON bodies are not, so `"title": 5` is
 * refused rather than turned into "5". A body that passes its schema must
 * also be Unicode text (src/http/well-formed-text.ts).
 */
export function validatorCompiler() {
  const options = { useDefaults: true, strict: false, allErrors: false } as const;
  const bodyAjv = withUuids(addFormats(new Ajv({ ...options, coerceTypes: false })));
  const textAjv = withUuids(addFormats(new Ajv({ ...options, coerceTypes: true })));
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => {
    if (httpPart !== 'body') return decimalIntegers(textAjv.compile(schema), schema);
    const valid = bodyAjv.compile(schema);
    // Fastify reads the failures from the function's `errors`, as Ajv leaves them.
    const validate = (body: unknown): boolean => {
      const ill = valid(body) ? illFormedText(body, schema as FieldSchema) : null;
      validate.errors =
        ill === null ? valid.errors : [{ instancePath: ill.pointer, schemaPath: '', keyword: 'wellFormed', params: {}, message: ill.message }];
      return !validate.errors;
    };
    validate.errors = null as typeof valid.errors;
    return validate;
  };
}

/** An integer as a query or path parameter is written in decimal digits, as the API's examples write it. */
const DECIMAL_INTEGER = /^-?[0-9]+$/;

/**
 * Ajv's coercion reads a parameter as JavaScript's `Number` does, so that
 * `limit=0x10`, `1e1`, `2.0` or ` 4 ` would pass as integers. The schema's
 * integer parameters must be decimal digits (with a sign, so that `-1` is
 * refused as out of range, saying so) before Ajv coerces them.
 */
function decimalIntegers(valid: ValidateFunction, schema: object): ValidateFunction {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integers = Object.keys(properties).filter((name) => properties[name]!.type === 'integer');
  if (integers.length === 0) return valid;
  const validate = ((data: Record<string, unknown>) => {
    const bad = integers.find((name) => typeof data[name] === 'string' && !DECIMAL_INTEGER.test(data[name]));
    if (bad === undefined) {
      const ok = valid(data);
      validate.errors = valid.errors;
      return ok;
    }
    validate.errors = [
      { instancePath: `/${bad}`, schemaPath: `#/properties/${bad}/type`, keyword: 'type', params: { type: 'integer' }, message: 'must be integer' },
    ];
    return false;
  }) as ValidateFunction;
  validate.errors = null;
  return validate;
}

