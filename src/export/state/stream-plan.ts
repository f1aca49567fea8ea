import type { Format, Mode, Resource } from '../../config/job-schema.js';

/** A stream as the checkpoint records it, to refuse a resume with other settings. */
export interface StreamPlan {
  name: string;
  resource: Resource;
  /** Parameters from the config (filters and limit), without the run's window and `partition`. */
  params: [string, string][];
  partitions: number;
  formats: Format[];
  mode: Mode;
  safetyLagMs: number;
  /** snapshot: completed snapshots to keep (undefined: all). */
  keep?: number | undefined;
  /** Metadata keys also written as `metadata_<key>` Parquet columns (absent: none). */
  metadataColumns?: readonly string[] | undefined;
  /** The config's own lastUpdatedTime bounds (inclusive), which the run's window stays within. */
  updatedBetween: { min: number | undefined; max: number | undefined };
}
