import type { Format, StreamResource, TableKind } from '../config/job-schema.js';
import type { InstanceColumn, PointsShape, ViewRef } from '../resources/index.js';

/** What a stream's shards hold, in which formats: declared once, here; a stream's plan is one. */
export interface StreamShape {
  /** The stream's name: what an instance stream's shards learn their size under. */
  name?: string | undefined;
  resource: StreamResource;
  /** Instances: the view, and its columns once the run has read them. */
  instances?: InstancesShape | undefined;
  /** Datapoints: the value columns of its shards (raw or which aggregates, with status or not). */
  shape?: PointsShape | undefined;
  /** A subscription's change rows: their optional columns (change-rows.ts). */
  changes?: { includeStatus: boolean } | undefined;
  formats: readonly Format[];
  /** Metadata keys the Parquet shards also hold as `metadata_<key>` columns. */
  metadataColumns?: readonly string[] | undefined;
  /**
   * 'delta': the stream is a Delta table, its Parquet shards the table's data files, written as the
   * protocol wants them (timestamps in microseconds) and committed with their stats (deltaStats).
   * Undefined: plain files.
   */
  table?: TableKind | undefined;
}

/** An instances stream's view, and its columns once the run has read them. */
export interface InstancesShape {
  view: ViewRef;
  columns?: InstanceColumn[] | undefined;
}
