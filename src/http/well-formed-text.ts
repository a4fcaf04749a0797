import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { InvalidRequest } from '../errors.js';
import { hookList } from './route-hooks.js';

declare global {
  interface String {
    /** ES2024, in Node.js since 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/**
 * The path of the first string in a parsed JSON body that is not Unicode
 * text (a lone surrogate, which JSON's `\ud83d` escape can carry), or null.
 */
export function illFormedText(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return value.isWellFormed() ? null : path;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    const found = illFormedText(item, path === '' ? key : `${path}.${key}`);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Request bodies must be Unicode text: a lone surrogate cannot be stored as
 * UTF-8, so Folio would answer it back as U+FFFD (src/store/sqlite/documents.ts)
 * while the write's own response echoed it. It is refused before the body
 * is validated, as the schema's own faults are (400, invalid_request), on
 * the routes that take a body only: the others pay nothing for the check.
 */
export function refuseIllFormedText(app: FastifyInstance) {
  const check: preValidationHookHandler = (request, _reply, done) => {
    const field = illFormedText(request.body);
    if (field === null) done();
    else done(new InvalidRequest(`body field ${field === '' ? '(the body)' : field}: must be Unicode text; it holds a lone surrogate.`));
  };
  app.addHook('onRoute', (route) => {
    if (route.schema?.body !== undefined) route.preValidation = [check, ...hookList(route.preValidation)];
  });
}
