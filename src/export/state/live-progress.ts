import { z } from 'zod';
import { CheckpointError } from '../../errors.js';
import { type Advice, parseStateFile } from './state-file.js';

/**
 * The progress file of a running run: beside the lock it holds (`.lock` -> `.progress.json`, a
 * worker's `_workers/worker-<i>-of-<k>.lock` -> `_workers/worker-<i>-of-<k>.progress.json`), the
 * partitions it drains now and the rows read of each so far, committed or not. The checkpoint
 * counts only committed rows, which a shard adds all at once when it is committed; this file is
 * what lets `status` show a partition fetching. Replaced whole (temp file and rename, or one PUT)
 * at most every few seconds, and removed by the run that wrote it when it ends.
 */

/** The key of the progress file beside the lock `lockKey`. */
export function progressKeyOf(lockKey: string): string {
  return `${lockKey.replace(/\.lock$/, '')}.progress.json`;
}

export const liveProgressSchema = z.strictObject({
  version: z.literal(1),
  /** Who writes it: the run holding the lock beside it, as that lock names it. */
  pid: z.number().int(),
  host: z.string(),
  startedAt: z.string(),
  /** Tells this run's file from another's: the run removes the file only when it still holds this. */
  token: z.string().regex(/^[0-9a-f]{16}$/),
  updatedAt: z.string(),
  /** Per partition drained now (`stream/m`): rows so far, those committed before this run included. */
  parts: z.record(z.string(), z.strictObject({ rows: z.number().int().min(0) })),
  /**
   * Per stream this run drains: rows so far, rows per second over the last writes, the platform's
   * count (this worker's share); datapoints: series done and selected. Absent: a build before them.
   */
  streams: z
    .record(
      z.string(),
      z.strictObject({
        rows: z.number().int().min(0),
        rowsPerSecond: z.number().min(0).optional(),
        total: z.number().int().min(0).optional(),
        series: z.number().int().min(0).optional(),
        seriesTotal: z.number().int().min(0).optional(),
      }),
    )
    .optional(),
});

export type LiveProgress = z.output<typeof liveProgressSchema>;

/** Nothing to move away: the run that writes the file replaces it, and status goes by the checkpoint meanwhile. */
const ADVICE: Advice = { notJson: 'status shows the checkpoint\'s figures instead.', invalid: 'Status shows the checkpoint\'s figures instead.' };

/**
 * A progress file's content, or why it cannot be used: it is advice for `status`, never a reason
 * to fail, so a damaged one is reported, not thrown.
 */
export function readLiveProgress(text: string, file: string): { progress: LiveProgress } | { damaged: string } {
  try {
    return { progress: parseStateFile(text, file, liveProgressSchema, 'a bulk-extract progress file', ADVICE) };
  } catch (error) {
    if (!(error instanceof CheckpointError)) throw error;
    return { damaged: error.message };
  }
}
