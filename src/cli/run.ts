import { parseArgs } from 'node:util';
import { type JobConfig, loadConfig } from '../config/load-config.js';
import { BulkExtractError, UsageError } from '../errors.js';
import { AuthError } from '../http/errors.js';
import { destinationOf, resolveWorker, runJob, type RunResult } from '../export/index.js';
import { createLogger } from '../log.js';
import { dryRun } from './dry-run.js';
import { EXIT, exitCodeOf } from './exit-codes.js';
import { withUsage } from './parse-flags.js';
import { startProgress } from './progress.js';
import { StatusLine } from './status-line.js';
import { jsonReport, refusedReport, runSummary, workerSummary } from './run-report.js';

export const RUN_USAGE = `Usage: bulk-extract run --config FILE [options]

Exports the job's streams to Parquet and/or NDJSON shards. Resumes from the checkpoint when there is
one; refuses to resume when the job's settings changed (use --fresh to start over).

Options:
  --config, -c FILE      The job file (YAML or JSON).
  --fresh                Forget earlier progress of the planned streams and start over.
  --repair               Read back every shard of the current runs; read only the damaged partitions
                         again from their first page (the same as bulk-extract repair).
  --dry-run              Validate the config, check the credential, print the plan and what a run
                         would refuse (drift, missing shards, a lock, an unwritable output); fetch nothing.
  --json                 Print one JSON summary on stdout at the end (also when the run fails).
  --stream NAME          Run only this stream.
  --shards K             Be one of K workers sharing the job (a Kubernetes Indexed Job): this one's
                         index is JOB_COMPLETION_INDEX (0 to K-1). The last to finish ends the run.
  --shard I/K            The same with the index given: shard I (0 to K-1) of K.
  --out DIR              Override output.dir.
  --concurrency N        Override source.concurrency (requests in flight at once).
  --formats LIST         Override output.formats, e.g. parquet,ndjson.
  --log-level LEVEL      debug | info | warn | error (default info).

Exit codes: 0 complete, 1 failed (resumable), 2 usage/config error, 3 auth refused,
130 interrupted (resumable).
`;

const FLAGS = {
  'config': { type: 'string', short: 'c' },
  'fresh': { type: 'boolean', default: false },
  'repair': { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  'json': { type: 'boolean', default: false },
  'stream': { type: 'string' },
  'shards': { type: 'string' },
  'shard': { type: 'string' },
  'out': { type: 'string' },
  'concurrency': { type: 'string' },
  'formats': { type: 'string' },
  'log-level': { type: 'string', default: 'info' },
  'help': { type: 'boolean', short: 'h' },
} as const;

export async function runRun(argv: string[]): Promise<number> {
  const { values } = withUsage(RUN_USAGE, () => parseFlags(argv));
  if (values.help) {
    console.log(RUN_USAGE);
    return EXIT.OK;
  }
  if (!values.json) return run(values);
  // --json: the summary comes on stdout whatever happens; the message still goes to stderr.
  let destination: string | null = null;
  try {
    return await run(values, (config) => {
      destination = destinationOf(config);
    });
  } catch (error) {
    if (!(error instanceof BulkExtractError)) throw error;
    const code = exitCodeOf(error);
    console.log(JSON.stringify(refusedReport(error, code, destination)));
    throw error;
  }
}

type Flags = ReturnType<typeof parseFlags>['values'];

function parseFlags(argv: string[]) {
  return parseArgs({ args: argv, strict: true, options: FLAGS });
}

async function run(values: Flags, onConfig: (config: JobConfig) => void = () => {}): Promise<number> {
  if (values.config === undefined) throw new UsageError(`--config FILE is required.\n\n${RUN_USAGE}`);
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && !Number.isInteger(concurrency)) {
    throw new UsageError(`--concurrency expects an integer, got '${values.concurrency}'.`);
  }
  const config = loadConfig(values.config, process.env, {
    out: values.out,
    concurrency,
    formats: values.formats?.split(',').map((f) => f.trim()),
  });
  onConfig(config);
  const worker = resolveWorker({ shard: values.shard, shards: values.shards }, process.env);
  const line = process.stderr.isTTY ? new StatusLine(process.stderr) : undefined;
  const logger = createLogger(values['log-level'], line !== undefined, line);
  if (values['dry-run']) {
    return dryRun(config, { only: values.stream, fresh: values.fresh, repair: values.repair, worker }, logger);
  }

  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      logger.warn({ signal }, 'second signal: exiting now; the next run resumes from the last checkpoint');
      process.exit(EXIT.INTERRUPTED);
    }
    logger.warn({ signal }, 'stopping: committing what is complete (send the signal again to exit at once)');
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  let stopProgress = () => {};
  try {
    const result = await runJob({
      config,
      fresh: values.fresh,
      repair: values.repair,
      stream: values.stream,
      worker,
      logger,
      signal: controller.signal,
      onStart: (handle) => {
        stopProgress = startProgress(handle, logger, line);
      },
    });
    stopProgress();
    console.error(runSummary(result, values.repair));
    if (worker !== undefined && result.finalize !== undefined) console.error(workerSummary(worker, result.finalize));
    const code = exitCode(result);
    if (values.json) {
      console.log(JSON.stringify(jsonReport(result, code, destinationOf(config))));
    }
    return code;
  } finally {
    stopProgress();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

function exitCode(result: RunResult): number {
  if (result.errors.some(({ error }) => error instanceof AuthError)) return EXIT.AUTH;
  if (result.state === 'failed') return EXIT.FAILED;
  if (result.state === 'interrupted') return EXIT.INTERRUPTED;
  return EXIT.OK;
}
