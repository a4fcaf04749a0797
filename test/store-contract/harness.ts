import { after, before } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { fixtures, type Fixtures } from './fixtures.js';
import { Model } from './model.js';

/** How many random worlds each property test tries: 25, or CONTRACT_RUNS for a deeper run. */
export const RANDOM_RUNS = Number(process.env.CONTRACT_RUNS) || 25;

/** A fresh, migrated store of the implementation under test, and how to close it and remove what it made. */
export type OpenStore = () => Promise<{ store: Store; close(): Promise<void> }>;

/** A store, the model of what was written to it, and factories that write to both. */
export interface Harness {
  readonly store: Store;
  readonly model: Model;
  readonly make: Fixtures;
}

/** A store of the implementation under test, an empty model beside it, and factories that write to both. */
async function openHarness(open: OpenStore): Promise<Harness & { close(): Promise<void> }> {
  const opened = await open();
  const model = new Model();
  return { store: opened.store, model, make: fixtures(opened.store, model), close: () => opened.close() };
}

/**
 * One store for the enclosing describe block: opened before its first test,
 * closed after its last. The returned object is filled in by then.
 */
export function useStore(open: OpenStore): Harness {
  let current: (Harness & { close(): Promise<void> }) | undefined;
  before(async () => {
    current = await openHarness(open);
  });
  after(async () => {
    await current?.close();
  });
  const get = (): Harness => {
    if (current === undefined) throw new Error('the store is opened before the first test');
    return current;
  };
  return {
    get store() {
      return get().store;
    },
    get model() {
      return get().model;
    },
    get make() {
      return get().make;
    },
  };
}
