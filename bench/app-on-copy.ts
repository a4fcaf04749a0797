import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Manifest } from './generate.js';

/**
 * Folio's app, for requests sent through Fastify's `inject`, over a copy of
 * the data set of `docs` documents that `npm run bench` made (a copy:
 * requests write the keys' last-used times), with rate limits out of the
 * way and the log at `info`, written nowhere. `close` closes the app and the
 * store and removes the copy.
 */
export async function appOnCopy(docs: string): Promise<{ app: FastifyInstance; manifest: Manifest; file: string; close(): Promise<void> }> {
  const data = resolve(import.meta.dirname, 'results', 'data');
  const manifest = JSON.parse(readFileSync(join(data, `docs-${docs}.json`), 'utf8')) as Manifest;
  const dir = mkdtempSync(join(tmpdir(), 'folio-on-copy-'));
  const file = join(dir, 'folio.db');
  copyFileSync(join(data, `docs-${docs}.db`), file);
  const store = openSqliteStore(file);
  const config = loadConfig({
    DATABASE_URL: `sqlite:${file}`,
    READ_LIMIT_PER_MIN: '1000000000',
    WRITE_LIMIT_PER_MIN: '1000000000',
    LOG_LEVEL: 'info',
  });
  const logStream = new Writable({ write: (_chunk, _encoding, done) => done() });
  const app = await buildApp({ config, store, logStream });
  await app.ready();
  return {
    app,
    manifest,
    file,
    close: async () => {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
