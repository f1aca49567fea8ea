import type { JobConfig } from '../config/load-config.js';
import { openOutput, type Output, runRecords, type StoredRunRecord } from '../export/index.js';
import type { Logger } from '../log.js';
import type { EarlierRuns } from './run-metrics.js';

/**
 * The last run and the last successful one, from the output's run records (`_runs/`), so that a
 * new process reports the same last success as the Pushgateway or textfile that an earlier one
 * wrote. Runs refused by the lock (exit 75) are passed over, as their metrics never said they ended.
 * Nothing when the output holds no record or cannot be read (then said at debug level).
 */
export async function readEarlierRuns(config: JobConfig, logger: Logger): Promise<EarlierRuns> {
  let output: Output | undefined;
  try {
    output = await openOutput(config, logger);
    // One walk of the records, newest first: the first is the last run; stop at the last success.
    const earlier: EarlierRuns = {};
    for await (const entry of runRecords(output.store, { logger })) {
      // A run refused because another live run held the output did not run: the last run is that one.
      if (entry.record.state === 'refused' && entry.record.reason?.code === 'E_LOCKED') continue;
      earlier.lastExitCode ??= entry.record.exitCode;
      if (entry.record.exitCode === 0) {
        earlier.lastSuccessMs = endOf(entry);
        break;
      }
    }
    return earlier;
  } catch (error) {
    logger.debug({ err: error instanceof Error ? error.message : String(error) }, 'metrics: the earlier runs could not be read');
    return {};
  } finally {
    await output?.store.close().catch(() => undefined);
  }
}

function endOf(entry: StoredRunRecord): number {
  return Date.parse(entry.record.finishedAt ?? entry.recordedAt);
}
