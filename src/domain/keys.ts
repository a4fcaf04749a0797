import { hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { randomBase62, toBase62 } from './ids.js';

/**
 * API key format (DESIGN §2): `fol_`, 32 random base62 characters, then a
 * 6-character base62 CRC32 checksum of them. A value that fails the format
 * or the checksum is refused without a database look-up.
 */
export const KEY_PREFIX = 'fol_';
const KEY_PATTERN = /^fol_([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;

export type Scope = 'connector:read' | 'connector:write';
export const READ_SCOPE: Scope = 'connector:read';
export const WRITE_SCOPE: Scope = 'connector:write';

export function scopesFor(canWrite: boolean): Scope[] {
  return canWrite ? [READ_SCOPE, WRITE_SCOPE] : [READ_SCOPE];
}

function checksum(body: string): string {
  return toBase62(crc32(body) >>> 0, 6);
}

export function generateKey(): string {
  const body = randomBase62(32);
  return `${KEY_PREFIX}${body}${checksum(body)}`;
}

export function isWellFormedKey(value: string): boolean {
  const m = KEY_PATTERN.exec(value);
  // A plain comparison: the checksum is a function of the characters before
  // it, which the caller sent, so its timing tells nothing they do not know.
  // The secret is checked by its hash in the store.
  return m !== null && checksum(m[1]!) === m[2];
}

/**
 * The key's SHA-256 in base64: what the store keeps of it (as its bytes) and
 * finds it by. One-shot hashing straight to text: no Hash object or Buffer
 * per request (a third of the time of hashing to a Buffer and encoding it).
 */
export function hashKey(secret: string): string {
  return hash('sha256', secret, 'base64');
}

export function lastFour(secret: string): string {
  return secret.slice(-4);
}

/** Extracts the key from an `Authorization: Bearer …` header value. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  return m ? m[1]! : null;
}
