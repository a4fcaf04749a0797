/**
 * Timestamps: stored and sent as `YYYY-MM-DDTHH:mm:ss.sssZ`, compared as
 * instants. `updatedAt` of a document strictly increases with every update.
 */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The next `updatedAt`: now, or one millisecond after the previous value if now is not later. */
export function nextUpdatedAt(nowMs: number, previous: string | null): string {
  if (previous === null) return toIso(nowMs);
  const prev = Date.parse(previous);
  return toIso(Math.max(nowMs, prev + 1));
}

/**
 * Every date-time the request schemas accept (ajv-formats' `date-time`):
 * RFC 3339, with a space for the `T` as its section 5.6 allows, and offsets
 * also written `+hhmm` or `+hh`.
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt\s](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-]\d{2})(?::?(\d{2}))?)$/;

/**
 * The instants a document's updatedAt can be: within the stored form's
 * four-digit years, 0001 to 9999, but not the very last millisecond, whose
 * next updatedAt would fall outside them. PostgreSQL reads no year 0000,
 * nor one past 9999 in this form.
 */
const FIRST_STORABLE = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_STORABLE = Date.parse('9999-12-31T23:59:59.999Z') - 1;

/**
 * Normalizes a client-sent date-time to the stored form, for comparison as an
 * instant. Returns null when it names an instant Folio can never have stored
 * (finer than a millisecond, a leap second, or outside the years it stores),
 * so that it matches nothing.
 */
export function canonicalInstant(value: string): string | null {
  const m = DATE_TIME.exec(value);
  if (!m) return null;
  const fraction = m[7] ?? '';
  if (/[1-9]/.test(fraction.slice(3))) return null;
  const zone = m[8] === undefined ? 'Z' : `${m[8]}:${m[9] ?? '00'}`;
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${fraction.slice(0, 3).padEnd(3, '0')}${zone}`);
  if (Number.isNaN(ms) || ms < FIRST_STORABLE || ms > LAST_STORABLE) return null;
  return toIso(ms);
}
