import type { RunHandle, StreamProgress } from '../export/index.js';
import type { Logger } from '../log.js';
import { RateWindow } from '../util/rate-window.js';
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
  const snapshot = progressMeter(run, () => performance.now());
  if (line === undefined) {
    const timer = setInterval(() => {
      const now = snapshot();
      logger.info(now, `progress: ${formatProgress(now)}`);
    }, 10_000);
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

/**
 * What the progress shows at each tick: rows, and rows per second over the last ticks
 * (RateWindow), for the run and each stream (until the window holds two ticks: the average since
 * the start). `now`: a monotonic clock in ms.
 */
export function progressMeter(
  run: Pick<RunHandle, 'rows' | 'partitionsDone' | 'plans' | 'client' | 'streams'>,
  now: () => number,
): () => ProgressSnapshot {
  const started = now();
  const atStart = new Map(run.streams().map((s) => [s.name, s.rows]));
  const rate = new RateWindow();
  const rates = new Map<string, RateWindow>();
  rate.add(started, run.rows());
  for (const s of run.streams()) rates.set(s.name, new RateWindow()).get(s.name)?.add(started, s.rows);
  return () => {
    const at = now();
    const rows = run.rows();
    const seconds = Math.max(0.001, (at - started) / 1000);
    const streams = run.streams().map((s) => {
      const since = (s.rows - (atStart.get(s.name) ?? 0)) / seconds;
      return { ...s, rowsPerSecond: rates.get(s.name)?.add(at, s.rows) ?? since };
    });
    return {
      rows,
      rowsPerSecond: Math.round(rate.add(at, rows) ?? rows / seconds),
      partitionsDone: run.partitionsDone(),
      partitions: run.plans.length,
      retries: run.client.stats.retries,
      elapsedSeconds: Math.round(seconds),
      streams,
    };
  };
}

/** `events 120,000/200,000 60% ETA 12s · assets 20,000 done | 44,534 rows/s, 8/12 partitions done, 0 retries, 5s`. */
export function formatProgress(s: ProgressSnapshot): string {
  const streams = s.streams.map((stream) => `${stream.name} ${streamProgress(stream)}`).join(' · ');
  return `${streams} | ${s.rowsPerSecond.toLocaleString('en-US')} rows/s, ${s.partitionsDone}/${s.partitions} partitions done, ${s.retries} retries, ${duration(s.elapsedSeconds)}`;
}

/**
 * One stream's part of the progress line: rows of the total with a percentage and an ETA, or a
 * datapoints stream's points and series; also what `status` shows of a stream a run drains.
 */
export function streamProgress(s: ProgressSnapshot['streams'][number]): string {
  const rows = s.rows.toLocaleString('en-US');
  if (s.series !== undefined) return seriesProgress(s, s.series);
  if (s.partitions > 0 && s.done === s.partitions) return `${rows} done`;
  if (s.total === undefined || s.total <= 0) return rows;
  // The platform's count is approximate: past it, the export goes on to the end of its cursors.
  if (s.rows >= s.total) return `${rows}/~${s.total.toLocaleString('en-US')} 99%+`;
  const percent = Math.floor((s.rows * 100) / s.total);
  const eta = s.rowsPerSecond > 0 ? ` ETA ${duration(Math.ceil((s.total - s.rows) / s.rowsPerSecond))}` : '';
  return `${rows}/${s.total.toLocaleString('en-US')} ${percent}%${eta}`;
}

/**
 * A datapoints stream: points, and series done of those selected with a percentage and an ETA:
 * the series left at the points per series so far, at the points per second now.
 */
function seriesProgress(s: ProgressSnapshot['streams'][number], series: number): string {
  const points = `${s.rows.toLocaleString('en-US')} points`;
  if (s.partitions > 0 && s.done === s.partitions) return `${points}, ${series.toLocaleString('en-US')} series, all done`;
  const total = s.seriesTotal;
  if (total === undefined || total <= 0) return `${points}, ${series.toLocaleString('en-US')} series done`;
  // The listing's count is approximate, as a collection's.
  if (series >= total) return `${points}, series ${series.toLocaleString('en-US')}/~${total.toLocaleString('en-US')} 99%+`;
  const percent = Math.floor((series * 100) / total);
  const eta = seriesEta(s.rows, series, total, s.rowsPerSecond);
  const left = eta === undefined ? '' : ` ETA ${duration(eta)}`;
  return `${points}, series ${series.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${percent}%${left}`;
}

/**
 * Seconds left for a datapoints stream: the series left, at the points per series read so far, at
 * `pointsPerSecond`. Undefined before a series is done or while no point comes.
 */
export function seriesEta(points: number, series: number, total: number, pointsPerSecond: number): number | undefined {
  if (series <= 0 || pointsPerSecond <= 0 || points <= 0) return undefined;
  return Math.ceil(((points / series) * Math.max(0, total - series)) / pointsPerSecond);
}

export function duration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}
