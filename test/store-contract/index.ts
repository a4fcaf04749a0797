import { describe } from 'node:test';
import { accountsContract } from './accounts.js';
import { adminContract } from './admin.js';
import { documentsContract } from './documents.js';
import { historyContract } from './history.js';
import type { OpenStore } from './harness.js';
import { orderingContract } from './ordering.js';
import { workspaceOrderingContract } from './ordering-workspace.js';
import { searchModelContract } from './search-model.js';
import { searchContract } from './search.js';
import { updatesContract } from './updates.js';
import { visibilityModelContract } from './visibility-model.js';
import { visibilityContract } from './visibility.js';

export type { OpenStore };

/**
 * What every implementation of the Store interface (src/store/store.ts)
 * must do, through the interface alone: who sees what (DESIGN §1, the
 * predicates of src/domain/visibility.ts), orders, search and timestamps
 * (DESIGN §3), optimistic concurrency, document history (DESIGN §7), and
 * the administration the command line relies on. `open` gives a fresh,
 * migrated store and a way to close it and remove what it made; each
 * describe block opens its own.
 */
export function storeContract(name: string, open: OpenStore): void {
  describe(`Store contract: ${name}`, () => {
    visibilityContract(open);
    visibilityModelContract(open);
    orderingContract(open);
    workspaceOrderingContract(open);
    searchContract(open);
    searchModelContract(open);
    documentsContract(open);
    updatesContract(open);
    historyContract(open);
    accountsContract(open);
    adminContract(open);
  });
}
