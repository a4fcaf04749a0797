import { isIP } from 'node:net';
import { isValidLookupKey } from './domain/plans.js';

/** Folio's configuration, read from the environment (DESIGN §4). */
export interface Config {
  port: number;
  host: string;
  /** As given; `sqlite:` selects the embedded store, `postgres://` (or `postgresql://`) PostgreSQL. */
  databaseUrl: string;
  database: { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string; poolMax: number };
  redisUrl: string | null;
  /** Base of the `url` fields, without a trailing slash. */
  publicAppUrl: string;
  /** The server's own base address, `http://HOST:PORT` (the wildcard addresses as localhost): the API is under `/v1` there. */
  serverUrl: string;
  apiPlans: string[];
  readLimitPerMin: number;
  writeLimitPerMin: number;
  maxBodyBytes: number;
  /** Bytes of large request bodies read and handled at once (src/http/body-budget.ts). */
  bodyBytesInFlight: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Which proxies' `X-Forwarded-For` to believe for the client's address
   * (Fastify's `trustProxy`): none (false), any (true), the nearest N
   * hops, or the listed addresses and networks.
   */
  trustProxy: boolean | number | string;
  /** Seconds a request may take to arrive whole, its body included; then it is answered 400 and its connection closed. */
  requestTimeoutS: number;
  /** The bearer token `/metrics` asks for; without one there is no `/metrics`. */
  metricsToken: string | null;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function text(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function parseDatabase(url: string, poolMax: number): Config['database'] {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') throw new ConfigError('DATABASE_URL', 'a sqlite: URL needs a file path, e.g. sqlite:./data/folio.db');
    return { kind: 'sqlite', file };
  }
  if (/^postgres(ql)?:\/\//i.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError('DATABASE_URL', 'not a valid PostgreSQL URL; expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE');
    }
    if (parsed.hostname === '' && !parsed.searchParams.has('host')) throw new ConfigError('DATABASE_URL', 'the PostgreSQL URL names no host');
    if (parsed.pathname.replace(/^\//, '') === '') throw new ConfigError('DATABASE_URL', 'the PostgreSQL URL names no database, e.g. postgres://folio@localhost/folio');
    return { kind: 'postgres', url, poolMax };
  }
  // The URL itself is not repeated: a database URL may hold a password.
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(url)?.[1];
  throw new ConfigError('DATABASE_URL', `${scheme ? `unsupported scheme "${scheme}"` : 'not a database URL'}; expected sqlite:PATH or postgres://USER@HOST/DATABASE`);
}

/**
 * REDIS_URL: `redis://[[user]:password@]host[:port][/db]`, or `rediss://` for
 * TLS. The URL itself is not repeated in messages: it may hold a password.
 */
function parseRedisUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('REDIS_URL', 'not a URL; expected redis://host:port (or rediss:// for TLS)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ConfigError('REDIS_URL', `unsupported scheme "${url.protocol}"; expected redis://host:port (or rediss:// for TLS)`);
  }
  if (url.hostname === '') throw new ConfigError('REDIS_URL', 'the URL names no host; expected redis://host:port');
  // ioredis would read options from a query (a password among them), which Folio does not name in messages.
  if (url.search !== '' || url.hash !== '' || raw.includes('?') || raw.includes('#')) {
    throw new ConfigError('REDIS_URL', 'options after "?" or "#" are not taken; put a password before the host, as in redis://:password@host:6379');
  }
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/\d+$/.test(url.pathname)) {
    throw new ConfigError('REDIS_URL', 'the path must be a database number, as in redis://host:6379/0');
  }
  return raw;
}

function parseUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `"${raw}" is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must be an http or https URL, got "${raw}"`);
  }
  // Paths are appended to it (`/documents/{id}`): a query or fragment would
  // end up before them. An empty one (`…/?`, `…/#`) reads as '' in the URL's
  // fields, so the text is asked as well.
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(raw)) {
    throw new ConfigError(name, `must be a base URL without "?" or "#", got "${raw}"`);
  }
  return url.toString().replace(/\/+$/, '');
}

/** A DNS host name: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * The server's own address as a URL. A URL cannot hold an IPv6 address's
 * zone (`fe80::1%eth0`), so it is left out; the wildcard addresses are
 * reached as localhost.
 */
function ownUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host.replace(/%.*$/, '')}]` : host;
  try {
    return new URL(`http://${name}:${port}`).toString().replace(/\/$/, '');
  } catch {
    // A name of DNS's letters that is still no host a URL may name (`xn--a.example`, a broken punycode label).
    throw new ConfigError('HOST', `"${host}" cannot be the host of a URL; expected an IP address or a host name such as 0.0.0.0 or localhost`);
  }
}

/**
 * The configuration of a server that listens on `port`: PORT 0 lets the
 * system choose one, which the server's own address, and the `url` fields'
 * base when PUBLIC_APP_URL is not set, then name instead of 0.
 */
export function withPort(config: Config, port: number): Config {
  const serverUrl = ownUrl(config.host, port);
  const publicAppUrl = config.publicAppUrl === config.serverUrl ? serverUrl : config.publicAppUrl;
  return { ...config, port, serverUrl, publicAppUrl };
}

/** An IP address, or a network as address/prefix length. */
function isAddressOrNetwork(entry: string): boolean {
  const [address = '', bits, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

function parseTrustProxy(raw: string | undefined): Config['trustProxy'] {
  if (raw === undefined || raw.toLowerCase() === 'false') return false;
  if (raw.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((e) => e.trim());
  if (entries.every(isAddressOrNetwork)) return entries.join(',');
  throw new ConfigError('TRUST_PROXY', `expected true, false, a number of proxy hops, or proxy addresses and networks such as 10.0.0.1,192.168.0.0/16, got "${raw}"`);
}

/** A token long enough not to be guessed, of characters a header carries as they are. */
function parseMetricsToken(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  if (!/^[\x21-\x7e]{16,}$/.test(raw)) throw new ConfigError('METRICS_TOKEN', 'expected at least 16 visible ASCII characters, without spaces');
  return raw;
}

/**
 * The most MAX_BODY_BYTES may be. A body is read as one JavaScript string,
 * which holds at most 512 MiB less 24 bytes (buffer.constants.MAX_STRING_LENGTH),
 * and a read of its document is answered with strings as long, twice as
 * long over MCP (get_document sends the Markdown in its JSON and as text):
 * past that, a body within the limit was answered 500, or its document
 * stored and then never read back whole.
 */
const LARGEST_BODY_BYTES = 128 * 1024 * 1024;

/** Reads and validates the configuration; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8787, 0, 65535);
  const host = text(env, 'HOST') ?? '127.0.0.1';
  // A name whose last label is a number is no host name but a malformed
  // IPv4 address (256.1.1.1, 1.2.3.4.5), as URLs read it too.
  if (isIP(host) === 0 && (!HOST_NAME.test(host) || /(^|\.)(\d+|0x[0-9a-f]*)$/i.test(host))) {
    throw new ConfigError('HOST', `expected an IP address or a host name such as 0.0.0.0 or localhost, got "${host}"`);
  }
  const databaseUrl = text(env, 'DATABASE_URL') ?? 'sqlite:./data/folio.db';
  // Read whichever database is named, so that a bad value never waits for the day PostgreSQL is.
  const database = parseDatabase(databaseUrl, integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000));

  const redisUrlRaw = text(env, 'REDIS_URL');
  const redisUrl = redisUrlRaw === undefined ? null : parseRedisUrl(redisUrlRaw);

  const serverUrl = ownUrl(host, port);
  const publicAppUrl = parseUrl('PUBLIC_APP_URL', text(env, 'PUBLIC_APP_URL') ?? serverUrl);

  const plansRaw = text(env, 'API_PLANS') ?? 'pro,team,enterprise';
  const apiPlans = plansRaw.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (apiPlans.length === 0 || !apiPlans.every(isValidLookupKey)) {
    throw new ConfigError('API_PLANS', `expected a comma-separated list of plan names like "pro,team,enterprise", got "${plansRaw}"`);
  }

  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const maxBodyBytes = integer(env, 'MAX_BODY_BYTES', 5 * 1024 * 1024, 1024, LARGEST_BODY_BYTES);
  return {
    port,
    host,
    databaseUrl,
    database,
    redisUrl,
    publicAppUrl,
    serverUrl,
    apiPlans,
    readLimitPerMin: integer(env, 'READ_LIMIT_PER_MIN', 120, 1, 1_000_000_000),
    writeLimitPerMin: integer(env, 'WRITE_LIMIT_PER_MIN', 30, 1, 1_000_000_000),
    maxBodyBytes,
    bodyBytesInFlight: integer(env, 'BODY_BYTES_IN_FLIGHT', Math.max(8 * 1024 * 1024, maxBodyBytes), 1024, 64 * 1024 * 1024 * 1024),
    logLevel: logLevel as Config['logLevel'],
    trustProxy: parseTrustProxy(text(env, 'TRUST_PROXY')),
    metricsToken: parseMetricsToken(text(env, 'METRICS_TOKEN')),
    requestTimeoutS: integer(env, 'REQUEST_TIMEOUT_S', 60, 1, 3600),
  };
}
