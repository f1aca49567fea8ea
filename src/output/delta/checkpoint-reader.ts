import { openAsBlob } from 'node:fs';
import { DeltaLogError } from '../../errors.js';
import type { OutputStore } from '../store.js';
import { actionOf } from './actions.js';
import type { TableState } from './table-state.js';

/**
 * Applies the actions of a checkpoint's Parquet files (all parts of a multi-part one) at `version`.
 * A checkpoint is the reconciled state, so its removes are only tombstones: an add never shares a
 * checkpoint with the remove of its path, and the removes are passed over. So is a commitInfo: the
 * snapshot's commits are those replayed after the checkpoint.
 */
export async function applyCheckpoint(
  store: OutputStore,
  keys: readonly string[],
  version: number,
  state: TableState,
): Promise<void> {
  for (const key of keys) await applyPart(store, key, version, state);
}

async function applyPart(store: OutputStore, key: string, version: number, state: TableState): Promise<void> {
  const where = store.where(key);
  // Loaded on first use, as verify-shard.ts does: parquet-wasm and apache-arrow are large.
  const [{ ParquetFile }, { tableFromIPC }] = await Promise.all([import('parquet-wasm'), import('apache-arrow')]);
  const copy = await store.localCopy(key);
  try {
    let file;
    try {
      file = await ParquetFile.fromFile(await openAsBlob(copy.path));
    } catch (error) {
      throw new DeltaLogError(`${where}: not a readable Parquet checkpoint (${String(error)})`);
    }
    try {
      const metadata = file.metadata();
      const groups = metadata.numRowGroups();
      metadata.free();
      let row = 0;
      // One row group at a time: a checkpoint of a long-lived table holds every active file.
      for (let group = 0; group < groups; group++) {
        const table = tableFromIPC((await file.read({ rowGroups: [group] })).intoIPCStream());
        for (const record of table) {
          row++;
          const action = actionOf(plain(record), `${where} row ${row}`);
          if (action === undefined || 'remove' in action || 'commitInfo' in action) continue;
          state.apply(action, version, `${where} row ${row}`);
        }
      }
    } finally {
      file.free();
    }
  } finally {
    await copy.release();
  }
}

/**
 * An Arrow row as the JSON a commit line would hold: structs and maps become objects, lists arrays,
 * nulls are dropped by the action's checks. Longs (bigint) become numbers where exact; a larger one
 * stays a string, which the action's checks refuse by name rather than round silently.
 */
function plain(record: unknown): unknown {
  return JSON.parse(
    JSON.stringify(record, (_key, value: unknown) =>
      typeof value === 'bigint' ? (Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()) : value,
    ),
  );
}
