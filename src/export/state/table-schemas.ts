import type { Checkpoint } from './checkpoint.js';

/**
 * delta-table.ts's assertTableSchemas for the named Delta table streams, loaded only when there
 * are some: it brings the Arrow and Parquet code along, which a job without tables never needs.
 */
export async function assertTableSchemas(names: readonly string[], checkpoint: Checkpoint): Promise<void> {
  if (names.length === 0) return;
  (await import('./delta-table.js')).assertTableSchemas(names, checkpoint);
}
