import type { StoredRunRecord } from '../export/index.js';
import { duration } from './progress.js';

/** How much of a reason's message a line shows: its first line, cut here. */
const REASON_CHARS = 100;

/**
 * `status`: the last runs, one line each, newest first: when it ended, the worker (of a split
 * job), state, exit code, duration, rows this run, requests and throttled requests, and
 * why it did not complete.
 */
export function formatRuns(runs: readonly StoredRunRecord[]): string[] {
  if (runs.length === 0) return ['runs: none recorded in _runs/ yet'];
  const workers = runs.map(({ worker }) => (worker === null ? '' : `worker ${worker.index}/${worker.count}`));
  const workerWidth = Math.max(...workers.map((text) => text.length));
  const lines = runs.map(({ recordedAt, record }, i) => {
    const when = recordedAt.replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
    const who = workerWidth === 0 ? '' : `  ${(workers[i] ?? '').padEnd(workerWidth)}`;
    const took = record.durationMs === null ? '-' : duration(Math.round(record.durationMs / 1000));
    const rows = `${record.rowsThisRun.toLocaleString('en-US')} rows`;
    const requests = `${record.requests.toLocaleString('en-US')} requests (${record.throttled.toLocaleString('en-US')} throttled)`;
    const why = record.reason === null ? '' : `  ${record.reason.code}: ${firstLine(record.reason.message)}`;
    return `  ${when}${who}  ${record.state.padEnd(13)}  exit ${String(record.exitCode).padEnd(3)}  ${took.padStart(6)}  ${rows.padStart(16)}  ${requests}${why}`;
  });
  return [`last ${runs.length === 1 ? 'run' : `${runs.length} runs`}, newest first:`, ...lines];
}

function firstLine(message: string): string {
  const line = message.split('\n')[0] ?? '';
  return line.length > REASON_CHARS ? `${line.slice(0, REASON_CHARS - 3)}...` : line;
}
