import {
  type FinalizeResult,
  idleReason,
  type Manifest,
  type RunRecord,
  type RunResult,
  type VerifyReport,
  type WorkerSpec,
} from '../export/index.js';
import { duration } from './progress.js';
import { changeRowsChecked } from './verify.js';

/** Per-stream rows, files, bytes, then the run's state, duration, rate and retries (for stderr). */
export function summary(manifest: Manifest, rowsThisRun: number): string {
  const seconds = (manifest.durationMs ?? 0) / 1000;
  return [
    `bulk-extract: ${manifest.state} in ${duration(Math.round(seconds))}, ${manifest.requests} requests (${manifest.throttled} throttled), ${manifest.retries} retries, ${Math.round(rowsThisRun / Math.max(seconds, 0.001)).toLocaleString('en-US')} rows/s this run`,
    ...streamLines(manifest),
  ].join('\n');
}

/** One line per stream: rows, files, bytes, done or not. */
function streamLines(manifest: Manifest): string[] {
  return Object.entries(manifest.streams).map(([name, stream]) => {
    const { files, bytes } = filesOf(manifest, name);
    const unknown = stream.unknownSeries?.length ?? 0;
    const skipped = unknown === 0 ? '' : `; ${unknown} series unknown to the platform, skipped (deleted, or never there)`;
    return `  ${name.padEnd(16)} ${stream.rows.toLocaleString('en-US').padStart(13)} rows  ${String(files).padStart(5)} files  ${megabytes(bytes).padStart(10)}  ${stream.done ? 'done' : 'not done'}${skipped}`;
  });
}

/** What a run prints on stderr at its end. */
export function runSummary(result: RunResult, repair: boolean): string {
  if (repair && result.damaged.size === 0) return 'bulk-extract repair: every shard matches the manifest; nothing to repair.';
  if (!result.wrote) {
    // Said once: the idle streams' reasons, then what the output holds (no run happened to time).
    const idle = result.idle.map((stream) => `  ${stream.stream}: ${idleReason(stream)}`);
    return ['bulk-extract: nothing to do; the output was not changed.', ...idle, ...streamLines(result.manifest)].join('\n');
  }
  const repaired = repair ? [`bulk-extract repair: read ${result.damaged.size} damaged partition(s) again: ${[...result.damaged.keys()].join(', ')}`] : [];
  const empty = result.empty.map(({ stream, note }) => `  ${stream}: ${note}`);
  return [...repaired, summary(result.manifest, result.rows), ...empty].join('\n');
}

/** What `run --verify` found, or why the run did not check: the run's last line. */
export type Verified =
  | { checked: true; report: VerifyReport } |
  { checked: false; why: 'not asked' | 'the job is not complete'; asked: boolean };

/** The summary's last line about verifying; none for a job not complete yet that was not asked to. */
export function verifySummary(verified: Verified): string | undefined {
  if (!verified.checked) {
    if (verified.why === 'not asked') {
      return 'keys not checked: run with --verify (or bulk-extract verify) to read every shard back and check that each key is unique';
    }
    return verified.asked ? 'not verified: the job is not complete' : undefined;
  }
  const { problems, keysChecked, changeRows } = verified.report;
  const keys = `${keysChecked.toLocaleString('en-US')} keys checked`;
  const checked = [
    ...(keysChecked > 0 || changeRows === 0 ? [`${keys}, each unique`] : []),
    ...(changeRows > 0 ? [changeRowsChecked(changeRows)] : []),
  ];
  if (problems.length === 0) return `verified: every shard matches the manifest; ${checked.join('; ')}`;
  const shown = problems.slice(0, 10).map((problem) => `  - ${problem}`);
  if (problems.length > 10) shown.push(`  - ... (${problems.length} in all: bulk-extract verify lists them)`);
  return [`verify FAILED: ${problems.length} problem(s); ${keys}`, ...shown].join('\n');
}

export function workerSummary(worker: WorkerSpec, finalize: FinalizeResult): string {
  const me = `worker ${worker.index}/${worker.count}`;
  if (finalize.finalized) return `${me}: complete, and the split job is finalized (every worker is complete; _SUCCESS written).`;
  if (finalize.waitingFor.length === 0) {
    return `${me}: complete; another run holds the output folder (a run without --shard, which took over the split job), and it ends the split job.`;
  }
  return `${me}: complete; ${others(finalize.waitingFor)}, and the last of them to finish ends the split job.`;
}

/** `worker 1 is not` or `workers 1, 2 are not`. */
function others(indexes: readonly number[]): string {
  return indexes.length === 1 ? `worker ${indexes[0]} is not` : `workers ${indexes.join(', ')} are not`;
}

/**
 * `run --json`: one object on stdout at the end of every run, refused and failed ones included; the
 * same object is the run's record in the output's `_runs/` (its fields: export/run-records.ts).
 */
export type JsonReport = RunRecord;

export function jsonReport(result: RunResult, exitCode: number, destination: string, verified?: Verified): JsonReport {
  const { manifest } = result;
  const idle = new Set(result.idle.map((i) => i.stream));
  const errors = result.errors.map(({ stream, m, error }) => ({ stream, partition: m, ...describe(error) }));
  return {
    exitCode,
    state: result.wrote ? manifest.state : 'nothing-to-do',
    reason: errors[0] === undefined ? null : { code: errors[0].code, message: errors[0].message },
    destination,
    startedAt: result.wrote ? manifest.startedAt : null,
    finishedAt: result.wrote ? (manifest.finishedAt ?? null) : null,
    durationMs: result.wrote ? (manifest.durationMs ?? null) : 0,
    requests: result.wrote ? manifest.requests : 0,
    retries: result.wrote ? manifest.retries : 0,
    throttled: result.wrote ? manifest.throttled : 0,
    rowsThisRun: result.rows,
    streams: Object.entries(manifest.streams).map(([name, stream]) => ({
      name,
      resource: stream.resource,
      mode: stream.mode,
      state: idle.has(name) ? 'nothing to do' : stream.done ? 'done' : 'not done',
      rows: stream.rows,
      ...filesOf(manifest, name),
      run: stream.run,
      window: stream.window,
      ...(stream.pointWindow === undefined ? {} : { pointWindow: stream.pointWindow }),
      ...(stream.unknownSeries === undefined ? {} : { unknownSeries: stream.unknownSeries }),
    })),
    errors,
    jobComplete: exitCode === 0 && (result.finalize === undefined ? manifest.state === 'complete' : result.finalize.finalized),
    verified: verifiedOf(verified),
  };
}

function verifiedOf(verified: Verified | undefined): JsonReport['verified'] {
  if (verified?.checked !== true) return null;
  return { problems: verified.report.problems, keysChecked: verified.report.keysChecked };
}

/** The report of a run that never started: refused, or stopped by an error before its partitions ran. */
export function refusedReport(error: unknown, exitCode: number, destination: string | null): JsonReport {
  return {
    exitCode,
    state: 'refused',
    reason: describe(error),
    destination,
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    requests: 0,
    retries: 0,
    throttled: 0,
    rowsThisRun: 0,
    jobComplete: false,
    streams: [],
    errors: [],
    verified: null,
  };
}

function describe(error: unknown): { code: string; message: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return { code: typeof code === 'string' ? code : 'E_INTERNAL', message: error instanceof Error ? error.message : String(error) };
}

function filesOf(manifest: Manifest, stream: string): { files: number; bytes: number } {
  const files = manifest.files.filter((f) => f.stream === stream);
  return { files: files.length, bytes: files.reduce((sum, f) => sum + f.bytes, 0) };
}

function megabytes(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MiB`;
}
