import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { openStore } from '../src/store/open.js';
import { createTestDatabase, describeOrSkip, POSTGRES_SKIPPED, postgresUrl } from './postgres.js';
import { storeContract } from './store-contract/index.js';

storeContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'folio-contract-'));
  const store = await openStore({ database: { kind: 'sqlite', file: join(dir, 'folio.db') } });
  return {
    store,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// PostgreSQL when it can be reached: a database for this run, a schema for each store.
const server = await postgresUrl();
if (server === null) {
  describeOrSkip('Store contract: PostgreSQL', POSTGRES_SKIPPED, () => {});
} else {
  const database = await createTestDatabase(server);
  after(() => database.drop());
  storeContract('PostgreSQL', () => database.openStore());
}
