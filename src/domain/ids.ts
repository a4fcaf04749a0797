import { randomBytes, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters drawn uniformly from base62 (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Encodes a non-negative integer in base62, left-padded with '0' to `width`. */
export function toBase62(value: number, width: number): string {
  let out = '';
  let n = value;
  do {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  } while (n > 0);
  return out.padStart(width, '0');
}

export const newUserId = (): string => `user_${randomBase62(20)}`;
export const newOrgId = (): string => `org_${randomBase62(20)}`;
export const newKeyId = (): string => `key_${randomBase62(20)}`;
export const newProjectId = (): string => `prj_${randomBase62(20)}`;
export const newUuid = (): string => randomUUID();

/**
 * What makes an `organizationId` well formed (DESIGN §2: malformed is "not
 * `org_…`"). Any other text after the prefix is an organization the caller
 * cannot see: 400 on lists, 404 on a document, like an unknown one.
 */
export const ORG_ID_PATTERN = '^org_';
