/** The store contract (test/helpers/store-contract.ts) against the memory store, paging on. */
import { MemoryStore } from '../../../src/store/memory-store.js';
import { storeContract } from '../../helpers/store-contract.js';

storeContract({
  name: 'memory store',
  pages: true,
  create() {
    const store = new MemoryStore({ paging: true });
    return Promise.resolve({
      open: () => Promise.resolve(store),
      drop: () => Promise.resolve(),
      dispose: () => Promise.resolve(),
    });
  },
});
