import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadConfig, type JobConfig } from '../../src/config/load-config.js';

/** The API key the simulator accepts in export tests; it reaches the config only through `${SIM_KEY}`. */
export const SIM_KEY = 'export-test-key-0001';
export const SIM_ENV = { SIM_KEY };

/** Temp folders made by a test file; `removeTempDirs()` (in afterEach) deletes them. */
const dirs: string[] = [];

/** A fresh temp folder; `tracked: false` leaves its removal to the caller (e.g. one run shared by a describe). */
export function tempDir(prefix = 'bulk-extract-export-', tracked = true): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (tracked) dirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface JobSpec {
  baseUrl: string;
  out: string;
  streams: Record<string, unknown>[];
  output?: Record<string, unknown>;
  retry?: Record<string, unknown>;
  concurrency?: number;
}

/** Writes the job as block-style YAML (the apiKey as `${SIM_KEY}`) into `dir` and loads it. */
export function loadJob(dir: string, spec: JobSpec): JobConfig {
  const source: Record<string, unknown> = {
    baseUrl: spec.baseUrl,
    auth: { type: 'api-key', apiKey: '${SIM_KEY}' },
  };
  if (spec.retry !== undefined) source.retry = spec.retry;
  if (spec.concurrency !== undefined) source.concurrency = spec.concurrency;
  const job = { source, streams: spec.streams, output: { dir: spec.out, ...spec.output } };
  const file = join(dir, 'job.yaml');
  writeFileSync(file, stringify(job));
  return loadConfig(file, SIM_ENV);
}

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** sum(base + i * stride) for i in [0, count), exactly. */
export function closedFormIdSum(base: number, stride: number, count: number): bigint {
  const n = BigInt(count);
  return n * BigInt(base) + (BigInt(stride) * n * (n - 1n)) / 2n;
}

/** A SQL string literal. */
export function sql(text: string): string {
  return `'${text.replaceAll('\'', '\'\'')}'`;
}
