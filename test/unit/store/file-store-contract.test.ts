/**
 * The store contract (test/helpers/store-contract.ts) against the file store: as configured by
 * default, and with every body in a file of its own (`largeBodyBytes: 1`), so the body-file path
 * keeps every promise the database path does.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageStore } from '../../../src/index.js';
import { FileStore, type FileStoreOptions } from '../../../src/store/file-store.js';
import { storeContract } from '../../helpers/store-contract.js';

function fileStoreContract(name: string, options: Partial<FileStoreOptions>): void {
  storeContract({
    name,
    pages: true,
    async create() {
      const dir = await mkdtemp(join(tmpdir(), 'file-store-contract-'));
      const opened: MessageStore[] = [];
      return {
        async open() {
          const store = await FileStore.open({ path: dir, ...options });
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
}

fileStoreContract('file store', {});
fileStoreContract('file store, bodies in files', { largeBodyBytes: 1 });
