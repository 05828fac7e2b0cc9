/** The store contract (test/helpers/store-contract.ts) against the file store. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageStore } from '../../../src/index.js';
import { FileStore } from '../../../src/store/file-store.js';
import { storeContract } from '../../helpers/store-contract.js';

storeContract({
  name: 'file store',
  pages: true,
  async create() {
    const dir = await mkdtemp(join(tmpdir(), 'file-store-contract-'));
    const opened: MessageStore[] = [];
    return {
      async open() {
        const store = await FileStore.open({ path: dir });
        opened.push(store);
        return store;
      },
      // The file store's close writes nothing that is not already committed: as a crash leaves it.
      drop: (store) => store.close(),
      async dispose() {
        for (const store of opened) await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});
