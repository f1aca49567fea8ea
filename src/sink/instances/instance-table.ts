import type { EncodedColumn } from '../parquet/encode.js';
import type { InstanceColumn, ViewRef } from '../../resources/index.js';

/** What the Parquet shards of an instance stream hold: the view's instances, in these columns. */
export interface InstanceTable {
  /** The stream's name: its shards' bytes per row are learned under it. */
  readonly name: string;
  readonly view: ViewRef;
  readonly columns: readonly InstanceColumn[];
}

/**
 * How an instance stream's columns are encoded: integers and times delta-encoded, as the
 * collections' are; `externalId`, unique within a space, plain (a dictionary of it never pays);
 * the others parquet-wasm's default, a dictionary that falls back to plain.
 */
export function instanceEncodings(columns: readonly InstanceColumn[]): EncodedColumn[] {
  return columns.map(({ name, kind, list, from }): EncodedColumn => {
    if (!list && (kind === 'int64' || kind === 'timestamp')) return { name, encoding: 'delta' };
    return { name, encoding: 'field' in from && from.field === 'externalId' ? 'plain' : undefined };
  });
}
