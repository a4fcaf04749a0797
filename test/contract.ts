import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

/**
 * Contract checks: a response of the API is compared with what Folio's own
 * OpenAPI document promises for its operation (path template + method) and
 * status: the status is listed, the body is JSON matching the schema, and the
 * required headers are present with valid values. Requests that match no
 * operation (unknown routes, /healthz, the docs page) are not checked.
 */

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, any>;

/** Where the document is registered in Ajv; it is never fetched. */
const DOCUMENT_ID = 'https://folio.invalid/v1/openapi.json';

export interface ObservedResponse {
  method: string;
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** The raw body text. */
  body: string;
}

export interface Operation {
  operationId: string;
  method: string;
  /** The path template, e.g. `/documents/{id}`. */
  path: string;
  spec: Json;
}

export interface Contract {
  document: Json;
  /** The operation a request addresses, or null when it addresses none. */
  operationFor(method: string, url: string): Operation | null;
  /** Problems found in a response; empty when it keeps the contract; null when no operation applies. */
  check(response: ObservedResponse): string[] | null;
  /** Validates a value against a schema found at a JSON pointer of the document. */
  validateAt(pointer: string, value: unknown): string[];
}

const escapePointer = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

const pathPattern = (base: string, template: string) =>
  new RegExp(`^${escapeRegExp(base + template).replace(/\\\{[^/]+?\\\}/g, '[^/]+')}$`);

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function buildContract(document: Json): Contract {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addSchema({ ...structuredClone(document), $id: DOCUMENT_ID });
  // Header values are text: coerce them to the header schema's type.
  const headerAjv = addFormats(new Ajv2020({ strict: false, allErrors: true, coerceTypes: true }));

  const base = new URL(document.servers?.[0]?.url ?? '/', 'http://folio.invalid').pathname.replace(/\/$/, '');
  const routes: Array<{ pattern: RegExp; path: string }> = Object.keys(document.paths ?? {}).map((path) => ({
    pattern: pathPattern(base, path),
    path,
  }));

  const headerValidators = new Map<string, ValidateFunction>();
  const headerValidator = (schema: Json) => {
    const key = JSON.stringify(schema);
    let validate = headerValidators.get(key);
    if (!validate) {
      validate = headerAjv.compile({ type: 'object', properties: { value: schema } });
      headerValidators.set(key, validate);
    }
    return validate;
  };

  const compiled = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string) => {
    let validate = compiled.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      compiled.set(pointer, validate);
    }
    return validate;
  };
  const errorsOf = (validate: ValidateFunction) =>
    (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is not valid'}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);

  function operationFor(method: string, url: string): Operation | null {
    const pathname = new URL(url, 'http://folio.invalid').pathname;
    const m = method.toLowerCase();
    for (const route of routes) {
      if (!route.pattern.test(pathname)) continue;
      const spec = document.paths[route.path]?.[m];
      if (spec) return { operationId: spec.operationId, method: m, path: route.path, spec };
    }
    return null;
  }

  function validateAt(pointer: string, value: unknown): string[] {
    const validate = validatorAt(pointer);
    return validate(value) ? [] : errorsOf(validate);
  }

  function check(response: ObservedResponse): string[] | null {
    const op = operationFor(response.method, response.url);
    if (!op) return null;
    const documented = op.spec.responses?.[String(response.status)];
    if (!documented) {
      return [`status ${response.status} is not documented (documented: ${Object.keys(op.spec.responses ?? {}).join(', ')})`];
    }
    const problems: string[] = [];
    const header = (name: string) => {
      const value = response.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value);
    };

    for (const [name, spec] of Object.entries<Json>(documented.headers ?? {})) {
      const value = header(name);
      if (value === undefined) {
        if (spec.required) problems.push(`required header ${name} is missing`);
        continue;
      }
      const validate = headerValidator(spec.schema ?? {});
      if (!validate({ value })) problems.push(`header ${name}: ${JSON.stringify(value)} ${validate.errors?.[0]?.message ?? 'is not valid'}`);
    }

    const media = documented.content?.['application/json'];
    if (media) {
      const contentType = header('content-type') ?? '';
      if (!contentType.startsWith('application/json')) problems.push(`content-type is "${contentType}", not application/json`);
      let body: unknown;
      try {
        body = JSON.parse(response.body);
      } catch {
        problems.push('the body is not JSON');
        return problems;
      }
      const pointer = `/paths/${escapePointer(op.path)}/${op.method}/responses/${response.status}/content/${escapePointer('application/json')}/schema`;
      problems.push(...validateAt(pointer, body).map((p) => `body ${p}`));
    } else if (response.body !== '') {
      problems.push('the body should be empty');
    }
    return problems;
  }

  return { document, operationFor, check, validateAt };
}

// Every app of a test run serves the same document: build its checks once.
const byText = new Map<string, Contract>();
const byDocument = new WeakMap<object, Contract>();

export function contractOf(app: FastifyInstance): Contract {
  if (typeof app.swagger !== 'function') throw new Error('contract: this app has no OpenAPI document (@fastify/swagger is not registered)');
  const document = app.swagger() as Json;
  let contract = byDocument.get(document);
  if (!contract) {
    const text = JSON.stringify(document);
    contract = byText.get(text) ?? buildContract(document);
    byText.set(text, contract);
    byDocument.set(document, contract);
  }
  return contract;
}

/** Throws when the response breaks the contract of the operation it answers. */
export function assertContract(app: FastifyInstance, response: ObservedResponse): void {
  const problems = contractOf(app).check(response);
  if (problems === null || problems.length === 0) return;
  const op = contractOf(app).operationFor(response.method, response.url);
  throw new Error(
    `Response breaks the OpenAPI contract of ${op?.operationId} (${response.method.toUpperCase()} ${response.url} → ${response.status}):\n  - ${problems.join('\n  - ')}\n  body: ${response.body.slice(0, 500)}`,
  );
}
