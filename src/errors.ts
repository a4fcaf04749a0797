/**
 * The errors of the API. Each kind knows its HTTP status and the spec's
 * error code; nothing else in Folio chooses a status code.
 */
export type ErrorCode =
  | 'unauthorized'
  | 'plan_required'
  | 'not_found'
  | 'invalid_request'
  | 'conflict'
  | 'rate_limited'
  | 'internal_error';

export const ERROR_CODES: readonly ErrorCode[] = [
  'unauthorized',
  'plan_required',
  'not_found',
  'invalid_request',
  'conflict',
  'rate_limited',
  'internal_error',
];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  toBody(): { error: { code: ErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

export class Unauthorized extends ApiError {
  constructor(message = 'The API key is missing, malformed, revoked or unknown.', headers: Record<string, string> = {}) {
    super(401, 'unauthorized', message, headers);
  }
}

export class PlanRequired extends ApiError {
  constructor(message = 'Your plan does not include API access. A Pro, Team or Enterprise plan is required.') {
    super(402, 'plan_required', message);
  }
}

export class NotFound extends ApiError {
  constructor(message = 'Not found.') {
    super(404, 'not_found', message);
  }
}

export class InvalidRequest extends ApiError {
  constructor(message: string) {
    super(400, 'invalid_request', message);
  }
}

export class Conflict extends ApiError {
  constructor(message: string) {
    super(409, 'conflict', message);
  }
}

export class RateLimited extends ApiError {
  constructor(retryAfterSeconds: number, headers: Record<string, string>, reason = 'Too many requests.') {
    super(429, 'rate_limited', `${reason} Retry after ${retryAfterSeconds} seconds.`, {
      'retry-after': String(retryAfterSeconds),
      ...headers,
    });
  }
}

export class InternalError extends ApiError {
  constructor() {
    super(500, 'internal_error', 'An unexpected error occurred. Retry once, then contact support.');
  }
}

/**
 * Errors of the operator's side (CLI, store administration): a message that
 * says what to fix. Never sent over HTTP.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
