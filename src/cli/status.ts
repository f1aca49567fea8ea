import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import {
  openOutput,
  type Output,
  outputAt,
  type OutputStatus,
  type PartStatus,
  readRunRecords,
  readStatus,
  streamName,
  streamRecord,
  type StreamStatus,
} from '../export/index.js';
import { createLogger, silentLogger } from '../log.js';
import { Redactor } from '../util/redact.js';
import { EXIT } from './exit-codes.js';
import { isBucketUrl, needsConfig } from './output-flag.js';
import { withUsage } from './parse-flags.js';
import { duration, streamProgress } from './progress.js';
import { formatRuns } from './run-history.js';

export const STATUS_USAGE = `Usage: bulk-extract status --config FILE [--runs N] [--json]
       bulk-extract status --out DIR [--runs N] [--json]

Shows the progress recorded in an output folder's checkpoint, without contacting the platform: per
stream its mode and window (incremental: its watermark; snapshots: the latest complete one), per
partition rows, shards, and whether it is done, fetching (with the rows a running run has read so
far), stopped, not started, or how long ago its cursor was saved; whether a run is running.
Then the last runs, from the records runs leave in the folder's _runs/: when each ended, its state,
exit code, duration, rows written, requests (throttled ones), and why it did not complete.
With --out, no job file is needed (an s3:// output needs --config). With --config, the job's
credentials need not be set: nothing is asked of the platform.

Options:
  --runs N    How many of the last runs to show (default 5; 0: none).
  --json      Print one JSON object; the runs are its "runs", newest first.
`;

const FLAGS = {
  config: { type: 'string', short: 'c' },
  out: { type: 'string' },
  runs: { type: 'string', default: '5' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The output to read, the job's streams when a job file was given, and what hides its sensitive values. */
async function target(
  values: { config?: string | undefined; out?: string | undefined },
): Promise<{ output: Output; jobStreams: string[]; redactor: Redactor }> {
  if (values.config === undefined) {
    if (values.out === undefined) throw new UsageError(`--config FILE or --out DIR is required.\n\n${STATUS_USAGE}`);
    if (isBucketUrl(values.out)) throw new UsageError(needsConfig('status', values.out));
    return { output: outputAt(values.out, silentLogger), jobStreams: [], redactor: Redactor.none };
  }
  // status reads the output, never the platform: the job's credentials need not be set.
  const config = loadConfig(values.config, process.env, { out: values.out }, 'unused');
  const { redactor } = config;
  const output = await redactor.guard(() => openOutput(config, silentLogger));
  return { output, jobStreams: config.streams.map(streamName), redactor };
}

export async function runStatus(argv: string[]): Promise<number> {
  const { values } = withUsage(STATUS_USAGE, () => parseArgs({ args: argv, strict: true, options: FLAGS }));
  if (values.help) {
    console.log(STATUS_USAGE);
    return EXIT.OK;
  }
  const limit = runsFlag(values.runs);
  const { output, jobStreams, redactor } = await target(values);
  const print = (text: string) => console.log(redactor.redact(text));
  try {
    return await redactor.guard(async () => {
      const status = await readStatus(output);
      if (status === undefined) {
        const { store, checkpointKey } = output;
        print(`No checkpoint at ${store.where(checkpointKey)}: the job has not run yet (into ${store.location}).`);
        return EXIT.OK;
      }
      // A record that cannot be read is a warning on stderr, not a failure of status.
      const runs = await readRunRecords(output.store, limit, { logger: createLogger('warn', undefined, undefined, redactor) });
      if (values.json) print(JSON.stringify({ ...status, runs }));
      else print([formatStatus(status, jobStreams), ...(limit === 0 ? [] : formatRuns(runs))].join('\n'));
      return EXIT.OK;
    });
  } finally {
    await output.store.close();
  }
}

function runsFlag(text: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`--runs expects a whole number of runs (0: none), got '${text}'.`);
  return Number(text);
}

function formatStatus(status: OutputStatus, jobStreams: readonly string[]): string {
  const lines: string[] = [];
  const { outDir, runner, split, workers } = status;
  if (split === undefined || workers === undefined) {
    const who = runner === undefined ? '' : ` (pid ${runner.pid} on ${runner.host}, since ${runner.startedAt})`;
    const said = status.state === 'stopped' ? 'stopped before it finished (killed?); run it again to resume' : `${status.state}${who}`;
    lines.push(`${outDir}: run ${said}`);
  } else {
    const describe = (s: { index: number; started: boolean; complete: boolean }) =>
      `${s.index} ${s.complete ? 'complete' : s.started ? 'not complete' : 'not started'}`;
    lines.push(`${outDir}: split job of ${split.count} workers since ${split.since}: ${workers.map(describe).join(', ')}`);
  }
  for (const s of status.streams) lines.push(`  ${s.stream}: ${describeStream(s)}`);
  const known = new Set(status.streams.map((s) => s.stream));
  for (const name of jobStreams.filter((n) => !known.has(n))) {
    lines.push(`  ${name}: not started (the job has it; no run has read it yet)`);
  }
  for (const part of status.parts) {
    const rows = part.rowsRead ?? part.rows;
    lines.push(
      `  ${part.stream.padEnd(16)} ${part.partition.padStart(6)}  ${rows.toLocaleString('en-US').padStart(13)} rows  ${String(part.shards).padStart(5)} shards  ${describePart(part)}`,
    );
  }
  return lines.join('\n');
}

/** done; fetching (rows read so far, those committed); stopped; its cursor's age; or not started. */
function describePart(part: PartStatus): string {
  const saved = `${part.seriesInFlight === undefined ? 'cursor' : `${part.seriesInFlight} series in flight`} saved ${duration(part.cursorAgeSeconds)} ago`;
  if (part.done) return 'done';
  if (part.live === 'fetching') {
    return `fetching (${part.rows.toLocaleString('en-US')} of these committed${part.started ? `; ${saved}` : ''})`;
  }
  if (part.live === 'stopped') return `stopped: the run fetching it is gone; ${part.started ? saved : 'nothing committed'}`;
  return part.started ? saved : 'not started';
}

function describeStream(s: StreamStatus): string {
  const iso = (ms: number | null) => (ms === null ? 'the beginning' : new Date(ms).toISOString());
  const record = streamRecord(s.resource);
  const of = record.window;
  const window =
    of === 'none'
      ? (record.reads?.(s.mode, s.window?.from ?? null) ?? 'no window')
      : s.window === null
        ? 'no window'
        : `${of} from ${iso(s.window.from)} to before ${iso(s.window.until)}`;
  const run = s.run === null ? '' : `, run=${s.run}`;
  const latest = s.mode !== 'snapshot' ? '' : `; latest complete snapshot: ${s.latest ?? 'none yet'} (${s.snapshots ?? 0} kept)`;
  const watermark =
    s.mode !== 'incremental'
      ? ''
      : `; watermark ${s.watermark === null ? 'none yet (no window completed)' : new Date(s.watermark).toISOString()}`;
  return `${s.mode}${run}, ${window}${latest}${watermark}${tableText(s.table)}${runningText(s.running)}`;
}

/** What the run draining a stream says of it in its progress file: as its progress line does, with rows/s. */
function runningText(running: StreamStatus['running']): string {
  if (running === undefined) return '';
  const { rowsPerSecond } = running;
  const progress = streamProgress({ name: '', partitions: 0, done: 0, total: undefined, ...running, rowsPerSecond: rowsPerSecond ?? 0 });
  const rate = rowsPerSecond === undefined ? '' : ` at ${rowsPerSecond.toLocaleString('en-US')} rows/s`;
  return `; now ${progress}${rate}`;
}

/** A Delta table stream's latest version: when it was committed, for which run. */
function tableText(table: StreamStatus['table']): string {
  if (table === undefined) return '';
  if (table === null) return '; Delta table: no version committed yet';
  if ('problem' in table) return `; Delta table: its log cannot be read: ${table.problem}`;
  const when = table.committedAt === null ? '' : ` committed ${new Date(table.committedAt).toISOString()}`;
  const run = table.run === null ? '' : ` (run=${table.run})`;
  return `; Delta table version ${table.version}${when}${run}, ${table.files} files`;
}
