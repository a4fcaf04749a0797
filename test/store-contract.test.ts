import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.js';
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
