import { Type, type SchemaOptions, type TSchema, type TString } from '@sinclair/typebox';
import { ERROR_CODES } from '../errors.js';
import { ORG_ID_PATTERN } from '../domain/ids.js';

/** Building blocks shared by the resources' schemas. */

export const DateTime = Type.String({ format: 'date-time', examples: ['2026-05-04T09:30:00.000Z'] });

/**
 * A string or null, written as the JSON Schema type list `["string", "null"]`
 * rather than an `anyOf`: fast-json-stringify serializes a type list with a
 * type check, but an `anyOf` by running a validator (format included) on every
 * value of every response.
 */
export function NullableString(schema: TString = Type.String(), options: SchemaOptions = {}) {
  // Its JSON Schema keywords only: TypeBox's own [Kind] 'String' would make TypeBox's checker refuse null.
  const keywords = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  return Type.Unsafe<string | null>({ ...keywords, ...options, type: ['string', 'null'] });
}

export const NullableDateTime = NullableString(DateTime);
export const Uuid = Type.String({ format: 'uuid', examples: ['6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11'] });
export const Url = Type.String({ format: 'uri' });

export const OrganizationId = Type.String({
  pattern: ORG_ID_PATTERN,
  description: 'Organization identifier (prefix `org_`). Scopes the request to that team workspace; without it the personal workspace is used.',
  examples: ['org_4fQ2kL9xTz8Wb1Nc7Rv3'],
});

export const ProjectId = Type.String({
  minLength: 1,
  description: 'Project id as returned by `GET /projects`.',
});

export const SearchQuery = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

export const Limit = (defaultValue: number) =>
  Type.Integer({ minimum: 1, maximum: 100, default: defaultValue, description: `1 to 100; default ${defaultValue}.` });

export const ProjectRef = Type.Object({ id: Type.String(), name: Type.String() }, { title: 'ProjectRef' });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))),
      message: Type.String(),
    }),
  },
  { title: 'Error' },
);

export const DocumentIdParams = Type.Object({
  id: Type.String({
    format: 'uuid',
    description: 'Document id (a UUID) as returned by `GET /documents`.',
    examples: ['6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11'],
  }),
});

type Status = 400 | 401 | 402 | 404 | 409 | 429 | 500;

/** The success schema plus the Error schema under each error status the spec lists for an operation. */
export function responses<S extends Record<number, TSchema>>(success: S, errors: Status[]) {
  const out: Record<number, TSchema> = { ...success };
  for (const status of errors) out[status] = ErrorBody;
  return out as S & Record<Status, typeof ErrorBody>;
}
