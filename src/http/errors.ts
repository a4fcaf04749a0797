import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, InternalError, InvalidRequest, NotFound } from '../errors.js';

/**
 * One place turns every failure into the spec's envelope: API errors,
 * validation, bad or oversized bodies, unknown routes and crashes. A crash is
 * logged in full and answered with a message that shows nothing of it.
 */
export function installErrorHandling(app: FastifyInstance, maxBodyBytes: number): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(err, maxBodyBytes);
    if (apiError instanceof InternalError) request.log.error({ err }, 'request failed');
    return reply.code(apiError.status).headers(apiError.headers).send(apiError.toBody());
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const error = new NotFound(`No endpoint matches ${request.method} ${request.url.split('?')[0]}.`);
    return reply.code(404).send(error.toBody());
  });
}

function toApiError(err: FastifyError, maxBodyBytes: number): ApiError {
  if (err instanceof ApiError) return err;
  if (err.validation) return new InvalidRequest(validationMessage(err));
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new InvalidRequest(`The request body is larger than the limit of ${maxBodyBytes} bytes.`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new InvalidRequest('The request body must be JSON, sent with Content-Type: application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InvalidRequest('The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new InvalidRequest('The request body is not valid JSON.');
  }
  if (err instanceof SyntaxError || err.statusCode === 400 || err.statusCode === 413 || err.statusCode === 415) {
    return new InvalidRequest('The request could not be read: check its body and headers.');
  }
  if (err.statusCode === 404) return new NotFound();
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return new InvalidRequest('The request is not valid.');
  }
  return new InternalError();
}

/** Plainer words for the pattern rules of a few fields. */
const PATTERN_HINTS: Record<string, string> = {
  contentMarkdown: 'must contain at least one non-whitespace character',
  organizationId: 'must be an organization id starting with "org_"',
};

/** "query parameter limit: must be <= 100.", naming the parameter as the caller sent it. */
function validationMessage(err: FastifyError): string {
  const first = err.validation?.[0];
  if (!first) return 'The request is not valid.';
  const part = err.validationContext === 'querystring' ? 'query parameter' : err.validationContext === 'params' ? 'path parameter' : 'body field';
  const path = first.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const missing = (first.params as { missingProperty?: string }).missingProperty;
  if (missing !== undefined) {
    const where = path === '' ? '' : `${path}.`;
    return `${part} ${where}${missing}: is required.`;
  }
  if (path === '') {
    return err.validationContext === 'body' ? `The request body ${first.message ?? 'is not valid'}.` : `The request ${first.message ?? 'is not valid'}.`;
  }
  const hint = first.keyword === 'pattern' ? PATTERN_HINTS[path] : undefined;
  return `${part} ${path}: ${hint ?? first.message ?? 'is not valid'}.`;
}
