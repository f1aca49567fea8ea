import { metadataColumnName } from '../../resources/index.js';
import type { StreamState } from './checkpoint-schema.js';
import type { StreamPlan } from './stream-plan.js';

/**
 * A stream's `metadataColumns` as the checkpoint records them: the keys and the Parquet column
 * each became, so that a resume whose columns would be named otherwise is refused as drift.
 */
export function metadataColumnsState(
  keys: readonly string[] | undefined,
): Pick<StreamState, 'metadataColumns' | 'metadataColumnNames'> {
  if (keys === undefined) return {};
  return { metadataColumns: [...keys], metadataColumnNames: keys.map(metadataColumnName) };
}

/**
 * The Parquet columns a checkpoint's stream wrote for its metadata keys. A checkpoint without
 * `metadataColumnNames` (written before they were recorded) named them with only A-Z, a-z, 0-9
 * and `_` kept, every other character as `_`.
 */
function recordedNames(saved: StreamState): string[] {
  return saved.metadataColumnNames ?? (saved.metadataColumns ?? []).map((key) => `metadata_${key.replace(/[^A-Za-z0-9_]/gu, '_')}`);
}

/**
 * How a stream's metadata columns differ from the checkpoint's: other keys, or the same keys now
 * named otherwise (which would give one stream shards of two schemas).
 */
export function metadataColumnsDrift(at: string, saved: StreamState, stream: StreamPlan): string[] {
  const keysBefore = (saved.metadataColumns ?? []).join(', ');
  const keysNow = (stream.metadataColumns ?? []).join(', ');
  if (keysBefore !== keysNow) return [`${at}: metadataColumns [${keysBefore}] in the checkpoint, [${keysNow}] in the config`];
  const namesBefore = recordedNames(saved).join(', ');
  const namesNow = (stream.metadataColumns ?? []).map(metadataColumnName).join(', ');
  if (namesBefore === namesNow) return [];
  return [
    `${at}: metadataColumns [${keysNow}] are the Parquet columns [${namesBefore}] in the shards written so far, and would be [${namesNow}] now (this version keeps Unicode letters and digits in the names); run with --fresh to write the stream again with the new names, or finish it with the version that began it`,
  ];
}
