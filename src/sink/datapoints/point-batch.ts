import type { CommittedShard } from '../shard-writer.js';

/**
 * The points of one answer of `POST /timeseries/data/list`, per series, checked already
 * (datapoints/answer.ts): each series' points in strictly increasing time.
 */
export interface SeriesPoints {
  readonly id: number;
  readonly externalId: string | undefined;
  readonly isString: boolean;
  /** Each point as the platform sent it: `timestamp`, then its value, status or aggregates. */
  readonly points: readonly PointValue[];
}

export type PointValue = { readonly timestamp: number } & Readonly<Record<string, unknown>>;

export type PointBatch = readonly SeriesPoints[];

/** Points in a batch. */
export function pointCount(batch: PointBatch): number {
  let count = 0;
  for (const series of batch) count += series.points.length;
  return count;
}

/** A shard writer of datapoints: the batches of a partition, as they come. */
export interface PointShardWriter {
  readonly format: 'parquet' | 'ndjson';
  readonly rows: number;
  readonly bytes: number;
  append(batch: PointBatch): Promise<void>;
  commit(): Promise<CommittedShard>;
  abort(): Promise<void>;
}
