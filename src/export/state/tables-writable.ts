import type { OutputStore } from '../../output/index.js';
import type { Checkpoint } from './checkpoint.js';

/**
 * delta-table.ts's assertTablesWritable for the named Delta table streams, loaded only when there
 * are some: it brings the Arrow and Parquet code along, which a job without tables never needs.
 */
export async function assertTablesWritable(
  store: OutputStore,
  names: readonly string[],
  checkpoint: Checkpoint,
): Promise<void> {
  if (names.length === 0) return;
  await (await import('./delta-table.js')).assertTablesWritable(store, names, checkpoint);
}
