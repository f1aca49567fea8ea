import type { RunHandle, StreamProgress } from '../export/index.js';
import type { Logger } from '../log.js';
import type { StatusLine } from './status-line.js';

export interface ProgressSnapshot {
  rows: number;
  rowsPerSecond: number;
  partitionsDone: number;
  partitions: number;
  retries: number;
  elapsedSeconds: number;
  streams: (StreamProgress & { rowsPerSecond: number })[];
}

/**
 * Live progress: on a terminal, the status line redrawn four times a second; otherwise a
 * structured log record every 10 s. Returns the function that stops it.
 */
export function startProgress(run: RunHandle, logger: Logger, line: StatusLine | undefined): () => void {
  const started = performance.now();
  const atStart = new Map(run.streams().map((s) => [s.name, s.rows]));
  let lastRows = 0;
  let lastAt = started;
  let rate = 0;
  const snapshot = (): ProgressSnapshot => {
    const now = performance.now();
    const rows = run.rows();
    if (now - lastAt >= 1000) {
      rate = ((rows - lastRows) * 1000) / (now - lastAt);
      lastRows = rows;
      lastAt = now;
    }
    const seconds = Math.max(0.001, (now - started) / 1000);
    return {
      rows,
      rowsPerSecond: Math.round(rate || rows / seconds),
      partitionsDone: run.partitionsDone(),
      partitions: run.plans.length,
      retries: run.client.stats.retries,
      elapsedSeconds: Math.round(seconds),
      streams: run.streams().map((s) => ({ ...s, rowsPerSecond: (s.rows - (atStart.get(s.name) ?? 0)) / seconds })),
    };
  };
  if (line === undefined) {
    const timer = setInterval(() => logger.info(snapshot(), `progress: ${formatProgress(snapshot())}`), 10_000);
    timer.unref();
    return () => clearInterval(timer);
  }
  const timer = setInterval(() => line.show(formatProgress(snapshot())), 250);
  timer.unref();
  return () => {
    clearInterval(timer);
    line.clear();
  };
}

/** `events 120,000/200,000 60% ETA 12s · assets 20,000 done | 44,534 rows/s, 8/12 partitions done, 0 retries, 5s`. */
export function formatProgress(s: ProgressSnapshot): string {
  const streams = s.streams.map((stream) => `${stream.name} ${streamProgress(stream)}`).join(' · ');
  return `${streams} | ${s.rowsPerSecond.toLocaleString('en-US')} rows/s, ${s.partitionsDone}/${s.partitions} partitions done, ${s.retries} retries, ${duration(s.elapsedSeconds)}`;
}

function streamProgress(s: ProgressSnapshot['streams'][number]): string {
  const rows = s.rows.toLocaleString('en-US');
  if (s.series !== undefined) {
    const points = `${rows} points, ${s.series.toLocaleString('en-US')} series done`;
    return s.partitions > 0 && s.done === s.partitions ? `${points}, all done` : points;
  }
  if (s.partitions > 0 && s.done === s.partitions) return `${rows} done`;
  if (s.total === undefined || s.total <= 0) return rows;
  // The platform's count is approximate: past it, the export goes on to the end of its cursors.
  if (s.rows >= s.total) return `${rows}/~${s.total.toLocaleString('en-US')} 99%+`;
  const percent = Math.floor((s.rows * 100) / s.total);
  const eta = s.rowsPerSecond > 0 ? ` ETA ${duration(Math.ceil((s.total - s.rows) / s.rowsPerSecond))}` : '';
  return `${rows}/${s.total.toLocaleString('en-US')} ${percent}%${eta}`;
}

export function duration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}
