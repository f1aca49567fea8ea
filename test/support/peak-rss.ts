import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The peak RSS of a CLI child process, as the process itself measures it: a module preloaded with
 * `NODE_OPTIONS=--require` writes `process.resourceUsage().maxRSS` (getrusage's high-water mark of
 * the whole process, every thread included) to a file when the process exits, however it exits
 * short of a kill. Neither /usr/bin/time nor polling /proc is needed, and no peak between two polls
 * is missed.
 */
export interface PeakRss {
  /** Add to the child's environment. */
  env: Record<string, string>;
  /** The child's peak RSS in MB, once it has exited. */
  megabytes(): number;
  close(): void;
}

export function peakRss(): PeakRss {
  const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-peak-rss-'));
  const preload = join(dir, 'peak-rss.cjs');
  const file = join(dir, 'peak-kb');
  writeFileSync(
    preload,
    [
      "const { isMainThread } = require('node:worker_threads');",
      "if (isMainThread) process.on('exit', () => require('node:fs').writeFileSync(process.env.PEAK_RSS_FILE, String(process.resourceUsage().maxRSS)));",
    ].join('\n'),
  );
  const options = [process.env.NODE_OPTIONS, `--require ${preload}`].filter((option) => option !== undefined && option !== '');
  return {
    env: { NODE_OPTIONS: options.join(' '), PEAK_RSS_FILE: file },
    megabytes: () => Number(readFileSync(file, 'utf8')) / 1024,
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
