import { parseArgs } from 'node:util';
import { type JobConfig, loadConfig } from '../config/load-config.js';
import { BulkExtractError, UsageError } from '../errors.js';
import { AuthError } from '../http/errors.js';
import {
  destinationOf,
  LockedError,
  recordRun,
  resolveWorker,
  runJob,
  type RunResult,
  verifyJob,
  type VerifyReport,
  type WorkerSpec,
} from '../export/index.js';
import { createLogger, type Logger } from '../log.js';
import { dryRun } from './dry-run.js';
import { MetricsGate } from './metrics-gate.js';
import { EXIT, exitCodeOf, RESUME_HINT } from './exit-codes.js';
import { withUsage } from './parse-flags.js';
import { startProgress } from './progress.js';
import { StatusLine } from './status-line.js';
import {
  type JsonReport,
  jsonReport,
  refusedReport,
  runSummary,
  type Verified,
  verifySummary,
  workerSummary,
} from './run-report.js';

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
  --shard I/K            The same with the index given: worker I (0 to K-1) of K.
  --out DIR              Override output.dir.
  --concurrency N        Override source.concurrency (requests in flight at once).
  --formats LIST         Override output.formats, e.g. parquet,ndjson.
  --metrics-textfile PATH
                         Write Prometheus metrics to PATH (*.prom) for node_exporter's textfile
                         collector (metrics.textfile).
  --metrics-push URL     Push Prometheus metrics to the Pushgateway at URL (metrics.pushgateway).
  --metrics-port PORT    Serve Prometheus metrics on PORT at /metrics while the run lasts (metrics.port).
  --metrics-run-deadline DURATION
                         How long this run may last, e.g. 50m or 48h: past it the alerts call a run
                         that has not ended dead or hung (metrics.runDeadline; it does not stop the run).
  --verify               Once the job is complete, read every shard back as bulk-extract verify does
                         (sizes, sha256, rows, every key unique, the records in agreement); exit 1
                         on any difference. Without it, keys are not checked by the run.
  --log-level LEVEL      debug | info | warn | error (default info).

Exit codes: 0 complete, 1 failed (resumable), 2 usage/config error, 3 auth refused,
75 another run of the same output is still going (this one changed nothing; the next scheduled
run does the work), 130 interrupted (resumable).
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
  'metrics-textfile': { type: 'string' },
  'metrics-push': { type: 'string' },
  'metrics-port': { type: 'string' },
  'metrics-run-deadline': { type: 'string' },
  'verify': { type: 'boolean', default: false },
  'log-level': { type: 'string', default: 'info' },
  'help': { type: 'boolean', short: 'h' },
} as const;

export async function runRun(argv: string[]): Promise<number> {
  const { values } = withUsage(RUN_USAGE, () => parseFlags(argv));
  if (values.help) {
    console.log(RUN_USAGE);
    return EXIT.OK;
  }
  // The summary comes whatever happens (on stdout with --json); a refusal's message still goes to stderr.
  const known: Known = {};
  let report: JsonReport;
  let summary: string | undefined;
  let refusal: BulkExtractError | undefined;
  try {
    const ended = await run(values, known);
    if (ended.report === undefined) return ended.code;
    ({ report, summary } = ended);
  } catch (error) {
    // The job's sensitive values never reach the error line (main.ts), the summary or the record.
    known.config?.redactor.redactError(error);
    if (!(error instanceof BulkExtractError)) {
      await known.metrics?.end(EXIT.FAILED, { code: 'E_INTERNAL' });
      throw error;
    }
    refusal = error;
    report = refusedReport(error, exitCodeOf(error), known.config === undefined ? null : destinationOf(known.config));
  }
  // A run that never began (refused) ends now: its metrics and its record say the same time.
  const endedAtMs = report.finishedAt === null ? Date.now() : Date.parse(report.finishedAt);
  const code = report.reason?.code ?? 'none';
  const jobComplete = report.jobComplete ?? false;
  await known.metrics?.end(report.exitCode, { endedAtMs, overlap: refusal instanceof LockedError, code, jobComplete });
  if (known.config !== undefined) report = known.config.redactor.redactStrings(report);
  // The same summary as the run's record in the output (_runs/), except for a dry run, which writes nothing.
  if (known.config !== undefined && known.logger !== undefined && !values['dry-run']) {
    await recordRun(known.config, report, { worker: known.worker, logger: known.logger, now: () => endedAtMs });
  }
  // Said last, once the metrics ended and the record is written: no log line comes after them.
  if (summary !== undefined) console.error(summary);
  if (values.json) console.log(JSON.stringify(report));
  if (refusal !== undefined) throw refusal;
  return report.exitCode;
}

/** What a run has learned of itself so far, for its summary and record. */
interface Known {
  config?: JobConfig;
  worker?: WorkerSpec | undefined;
  logger?: Logger;
  metrics?: MetricsGate;
}

type Flags = ReturnType<typeof parseFlags>['values'];

function parseFlags(argv: string[]) {
  return parseArgs({ args: argv, strict: true, options: FLAGS });
}

/**
 * A run to its end: its exit code, its report and the summary for stderr, redacted (neither for a
 * dry run, which prints its own report).
 */
async function run(values: Flags, known: Known): Promise<{ code: number; report?: JsonReport; summary?: string }> {
  if (values.config === undefined) throw new UsageError(`--config FILE is required.\n\n${RUN_USAGE}`);
  const config = loadConfig(values.config, process.env, {
    out: values.out,
    concurrency: integerFlag(values.concurrency, '--concurrency', 'an integer'),
    formats: values.formats?.split(',').map((f) => f.trim()),
    metrics: {
      textfile: values['metrics-textfile'],
      pushgateway: values['metrics-push'],
      port: integerFlag(values['metrics-port'], '--metrics-port', 'a port number'),
      runDeadline: values['metrics-run-deadline'],
    },
  });
  known.config = config;
  const worker = resolveWorker({ shard: values.shard, shards: values.shards }, process.env);
  known.worker = worker;
  const line = process.stderr.isTTY ? new StatusLine(process.stderr) : undefined;
  const logger = createLogger(values['log-level'], line !== undefined, line, config.redactor);
  known.logger = logger;
  if (values['dry-run']) {
    const options = { only: values.stream, fresh: values.fresh, repair: values.repair, worker };
    return { code: await dryRun(config, options, logger) };
  }

  // Started once the run holds its output, not before: until then another live run may hold it.
  const metrics = new MetricsGate(config, logger, { only: values.stream, worker });
  known.metrics = metrics;
  const signals = stopOnSignals(logger);
  let stopProgress = () => {};
  try {
    const result = await runJob({
      config,
      fresh: values.fresh,
      repair: values.repair,
      stream: values.stream,
      worker,
      logger,
      signal: signals.signal,
      onHeld: () => metrics.open(),
      onStart: (handle) => {
        stopProgress = startProgress(handle, logger, line);
        metrics.attach(handle);
      },
    });
    stopProgress();
    const said = [runSummary(result, values.repair)];
    if (worker !== undefined && result.finalize !== undefined) said.push(workerSummary(worker, result.finalize));
    const verified = await verifyAfter(values.verify, result, worker, () => verifyJob(config, logger));
    // A run that had nothing to do checked nothing and wrote nothing: no advice on checking keys.
    const verdict = result.wrote || verified.checked ? verifySummary(verified) : undefined;
    if (verdict !== undefined) said.push(verdict);
    const code = verified.checked && verified.report.problems.length > 0 ? EXIT.FAILED : exitCode(result);
    if (code === EXIT.INTERRUPTED) said.push(RESUME_HINT);
    const summary = config.redactor.redact(said.join('\n'));
    return { code, report: jsonReport(result, code, destinationOf(config), verified), summary };
  } finally {
    stopProgress();
    signals.remove();
  }
}

/** A flag's whole number; undefined when the flag is not given. */
function integerFlag(value: string | undefined, flag: string, what: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number)) throw new UsageError(`${flag} expects ${what}, got '${value}'.`);
  return number;
}

/**
 * SIGINT and SIGTERM abort the returned signal: the run commits what is complete and stops. A
 * second signal exits at once (the next run resumes from the last checkpoint).
 */
function stopOnSignals(logger: Logger): { signal: AbortSignal; remove: () => void } {
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
  return {
    signal: controller.signal,
    remove: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/**
 * `--verify`: the output read back as `bulk-extract verify` reads it, once the job is complete (a
 * worker's share alone is not the job). Without the flag, or before the job is complete: why not.
 */
async function verifyAfter(
  asked: boolean,
  result: RunResult,
  worker: WorkerSpec | undefined,
  verify: () => Promise<VerifyReport>,
): Promise<Verified> {
  const complete = result.state === 'complete' && (worker === undefined || result.finalize?.finalized === true);
  if (!complete) return { checked: false, why: 'the job is not complete', asked };
  if (!asked) return { checked: false, why: 'not asked', asked };
  return { checked: true, report: await verify() };
}

function exitCode(result: RunResult): number {
  const refused = (error: unknown) =>
    error instanceof AuthError || (error instanceof BulkExtractError && exitCodeOf(error) === EXIT.AUTH);
  if (result.errors.some(({ error }) => refused(error))) return EXIT.AUTH;
  // A failure that retrying cannot mend (a refused sync cursor) is the user's to decide on.
  const decide = result.errors.some(({ error }) => error instanceof BulkExtractError && exitCodeOf(error) === 2);
  if (decide) return EXIT.USAGE;
  if (result.state === 'failed') return EXIT.FAILED;
  if (result.state === 'interrupted') return EXIT.INTERRUPTED;
  return EXIT.OK;
}
