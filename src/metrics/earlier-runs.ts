import type { JobConfig } from '../config/load-config.js';
import { openOutput, type Output, readDataEnds, runRecords, type StoredRunRecord } from '../export/index.js';
import type { Logger } from '../log.js';
import type { EarlierRuns } from './run-facts.js';

/**
 * The last run and the last successful one, from the output's run records (`_runs/`), so that a
 * new process reports the same last success, last end and exit code as the Pushgateway or
 * textfile that an earlier one wrote. Runs refused by the lock (exit 75) are passed over, as their
 * metrics never said they ended. Nothing when the output holds no record or cannot be read (then
 * said at debug level).
 */
export function readEarlierRuns(config: JobConfig, logger: Logger): Promise<EarlierRuns> {
  return fromOutput(config, logger, 'the earlier runs', {}, async (output) => {
    // One walk of the records, newest first: the first is the last run; stop at the last success.
    const earlier: EarlierRuns = {};
    for await (const entry of runRecords(output.store, { logger })) {
      // A run refused because another live run held the output did not run: the last run is that one.
      if (entry.record.state === 'refused' && entry.record.reason?.code === 'E_LOCKED') continue;
      if (earlier.lastExitCode === undefined) {
        earlier.lastExitCode = entry.record.exitCode;
        earlier.lastEndMs = endOf(entry);
        earlier.lastCode = entry.record.reason?.code ?? 'none';
      }
      // A success of the job: a worker's share complete is none until the split job is finalized.
      if (entry.record.exitCode === 0 && (entry.record.jobComplete ?? entry.worker === null)) {
        earlier.lastSuccessMs = endOf(entry);
        break;
      }
    }
    return earlier;
  });
}

/**
 * The end of the last completed window of each incremental and snapshot stream, as the output's
 * checkpoint and `_LATEST` files say now (readDataEnds); undefined when they cannot be read.
 */
export function readStreamDataEnds(config: JobConfig, logger: Logger): Promise<Map<string, number> | undefined> {
  return fromOutput<Map<string, number> | undefined>(config, logger, 'the data ends', undefined, (output) => readDataEnds(output));
}

/** `read` of the job's output, closed again; `fallback` when it cannot be opened or read. */
async function fromOutput<T>(
  config: JobConfig,
  logger: Logger,
  what: string,
  fallback: T,
  read: (output: Output) => Promise<T>,
): Promise<T> {
  let output: Output | undefined;
  try {
    output = await openOutput(config, logger);
    return await read(output);
  } catch (error) {
    logger.debug({ err: error instanceof Error ? error.message : String(error) }, `metrics: ${what} could not be read`);
    return fallback;
  } finally {
    await output?.store.close().catch(() => undefined);
  }
}

function endOf(entry: StoredRunRecord): number {
  return Date.parse(entry.record.finishedAt ?? entry.recordedAt);
}
