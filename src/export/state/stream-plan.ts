import type { Mode } from '../../config/job-schema.js';
import type { StreamShape } from '../../sink/index.js';

/**
 * A stream as the checkpoint records it, to refuse a resume with other settings. Each of its
 * partitions refers to it (PartitionPlan.stream) rather than copying its settings.
 */
export interface StreamPlan extends StreamShape {
  name: string;
  /** Parameters from the config (filters and limit), without the run's window and `partition`. */
  params: [string, string][];
  partitions: number;
  mode: Mode;
  safetyLagMs: number;
  /** snapshot: completed snapshots to keep (undefined: all). */
  keep?: number | undefined;
  /** The config's own lastUpdatedTime bounds (inclusive), which the run's window stays within. */
  updatedBetween: { min: number | undefined; max: number | undefined };
}
