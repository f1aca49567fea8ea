import type { RunHandle } from '../export/run-job.js';
import type { Logger } from '../log.js';

/**
 * Live progress: on a terminal, one line on stderr redrawn four times a second; otherwise a
 * structured log record every 10 s. Returns the function that stops it.
 */
export function startProgress(run: RunHandle, logger: Logger, terminal: boolean): () => void {
  const started = performance.now();
  let lastRows = 0;
  let lastAt = started;
  let rate = 0;
  const snapshot = () => {
    const now = performance.now();
    const rows = run.rows();
    if (now - lastAt >= 1000) {
      rate = ((rows - lastRows) * 1000) / (now - lastAt);
      lastRows = rows;
      lastAt = now;
    }
    return {
      rows,
      rowsPerSecond: Math.round(rate || (rows * 1000) / Math.max(1, now - started)),
      partitionsDone: run.partitionsDone(),
      partitions: run.plans.length,
      retries: run.client.stats.retries,
      elapsedSeconds: Math.round((now - started) / 1000),
    };
  };
  if (!terminal) {
    const timer = setInterval(() => logger.info(snapshot(), 'progress'), 10_000);
    timer.unref();
    return () => clearInterval(timer);
  }
  const draw = () => {
    const s = snapshot();
    process.stderr.write(
      `\r\x1b[2K${s.rows.toLocaleString('en-US')} rows  ${s.rowsPerSecond.toLocaleString('en-US')} rows/s  ` +
      `partitions ${s.partitionsDone}/${s.partitions} done  retries ${s.retries}  elapsed ${duration(s.elapsedSeconds)}`,
    );
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  return () => {
    clearInterval(timer);
    process.stderr.write('\r\x1b[2K');
  };
}

export function duration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}
