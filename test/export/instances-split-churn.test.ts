import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Simulator } from '../../src/simulator/index.js';
import { SIM_KEY } from '../support/export-harness.js';
import { liveKeys, keyOf } from '../support/instances.js';
import { ndjsonRows } from '../support/ndjson-rows.js';
import { describeExit, newSimulator, runCliWith, tempDir } from '../support/resume-harness.js';

/**
 * A split read while the instances change (the simulator's churn: updates that draw new property
 * values, inserts, soft deletes): every instance that existed for the whole run is exported once,
 * none twice. Only what never changes may split a stream (docs/instances.md): its externalId, its
 * space; a split by a property, which an update may move from one query's range to another's
 * while they read, is refused when the job is loaded. An incremental stream's split holds each
 * instance in its own query only, and its backfill (the view, then the changes made meanwhile)
 * stays within the read limit.
 */
const ASSET_VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const SPACES = ['sim_site_a', 'sim_site_b', 'sim_site_c'];
const ASSETS = 20_000;
/** Changes per second of the simulator's clock, which moves TICK_MS each time it is read. */
const CHURN = 3000;
const TICK_MS = 2;

/**
 * A simulator of 20,000 assets (nothing else) that changes them as it answers: its clock moves
 * with every reading, so each request brings changes, as many on a slow machine as on a fast one.
 */
async function churningSimulator(): Promise<Simulator> {
  let now = Date.UTC(2026, 5, 1);
  const clock = {
    now: () => (now += TICK_MS),
    sleep: (ms: number) => {
      now += ms;
      return Promise.resolve();
    },
  };
  return newSimulator({
    seed: 42,
    apiKeys: [SIM_KEY],
    clock,
    churn: CHURN,
    instances: { assets: ASSETS, activities: 0, timeseries: 0, edges: 0 },
  });
}

interface Outcome {
  exit: Awaited<ReturnType<typeof runCliWith>>;
  /** Rows whose key an earlier row of the export has. */
  duplicates: number;
  /** Instances live before the run and after it (so through all of it) that no row holds. */
  missing: number;
  rows: number;
}

/** Runs the assets stream with `stream`'s keys (NDJSON, pages of 500) while the simulator churns. */
async function runUnderChurn(sim: Simulator, split: Record<string, unknown>) {
  const dir = tempDir('split-churn');
  const out = join(dir, 'out');
  const file = join(dir, 'job.yaml');
  const stream = { resource: 'instances', name: 'assets', view: ASSET_VIEW, limit: 500, ...split };
  const job = {
    source: { baseUrl: sim.baseUrl, auth: { type: 'api-key', apiKey: '${SIM_KEY}' }, concurrency: 4 },
    streams: [stream],
    output: { dir: out, formats: ['ndjson'] },
  };
  writeFileSync(file, stringify(job));
  const before = new Set(liveKeys(sim, 'asset'));
  const exit = await runCliWith(['run', '--config', file], { cwd: dir, env: { SIM_KEY } });
  const throughout = liveKeys(sim, 'asset').filter((key) => before.has(key));
  return { out, exit, throughout };
}

/** Exports the assets with `split` while the simulator churns, and counts what went wrong. */
async function exportUnderChurn(sim: Simulator, split: Record<string, unknown>): Promise<Outcome> {
  const { out, exit, throughout } = await runUnderChurn(sim, split);
  if (exit.code !== 0) return { exit, duplicates: 0, missing: 0, rows: 0 };
  const seen = new Set<string>();
  let duplicates = 0;
  const rows = ndjsonRows(join(out, 'assets'));
  for (const row of rows) {
    const key = keyOf(row as { space: string; externalId: string });
    if (seen.has(key)) duplicates++;
    seen.add(key);
  }
  return { exit, duplicates, missing: throughout.filter((key) => !seen.has(key)).length, rows: rows.length };
}

describe.concurrent('a split read while the instances change', () => {
  it.each<[string, Record<string, unknown>]>([
    ['no split', {}],
    ['split: space', { spaces: SPACES, split: 'space' }],
    ['split by externalId', { split: { property: 'externalId', at: ['AST-000005000', 'AST-000010000', 'AST-000015000'] } }],
  ])('%s: every instance that existed for the whole run once, none twice', async (_, split) => {
    const sim = await churningSimulator();
    const { exit, duplicates, missing, rows } = await exportUnderChurn(sim, split);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect({ duplicates, missing }).toEqual({ duplicates: 0, missing: 0 });
    // The churn did change the view while it was read: inserts and deletes on top of the 20,000.
    expect(sim.instances.count('asset')).toBeGreaterThan(ASSETS + 100);
    expect(rows).toBeGreaterThan(ASSETS * 0.9);
  });

  it('split by a property (criticality): refused when the job is loaded, by name, never run to a wrong answer (exit 2)', async () => {
    const sim = await churningSimulator();
    const { exit, duplicates, missing } = await exportUnderChurn(sim, { split: { property: 'criticality', at: [2, 4] } });
    expect(exit.code, `exit ${exit.code}: ${duplicates} duplicate rows, ${missing} instances of the whole run missing\n${describeExit(exit)}`).toBe(2);
    expect(exit.stderr).toContain('streams.0.split.property: criticality is a property of the view');
    expect(exit.stderr).toContain('split: {property: externalId, at: [...]}');
    expect(sim.stats().requests).toBe(0);
  });

  it('incremental, split by externalId: the backfill holds every instance of the whole run, each in its own query only, within the read limit', async () => {
    const sim = await churningSimulator();
    const at = ['AST-000005000', 'AST-000010000', 'AST-000015000'];
    const { out, exit, throughout } = await runUnderChurn(sim, { mode: 'incremental', split: { property: 'externalId', at } });
    expect(exit.code, describeExit(exit)).toBe(0);
    const rows = runRows(join(out, 'assets'));
    // The feed shows an instance once per change: a key may come again, but only from its own query.
    const parts = new Map<string, Set<string>>();
    for (const { part, row } of rows) {
      const key = keyOf(row as { space: string; externalId: string });
      parts.set(key, (parts.get(key) ?? new Set()).add(part));
      const m = at.filter((boundary) => String(row.externalId) >= boundary).length + 1;
      expect(part, key).toBe(`part=${m}-of-4`);
    }
    expect([...parts.values()].filter((found) => found.size > 1)).toEqual([]);
    expect(throughout.filter((key) => !parts.has(key))).toEqual([]);
    // The changes made while the backfill read came after it, and stayed far within the read limit.
    expect(rows.length).toBeGreaterThan(ASSETS);
    expect(rows.length).toBeLessThan(2 * ASSETS);
  });
});

/** The rows of an incremental stream's run folders, with the `part=` folder each came from. */
function runRows(streamDir: string): { part: string; row: Record<string, unknown> }[] {
  const found: { part: string; row: Record<string, unknown> }[] = [];
  for (const run of readdirSync(streamDir).filter((name) => name.startsWith('run='))) {
    for (const part of readdirSync(join(streamDir, run)).filter((name) => name.startsWith('part='))) {
      for (const name of readdirSync(join(streamDir, run, part)).filter((file) => file.endsWith('.ndjson'))) {
        const lines = readFileSync(join(streamDir, run, part, name), 'utf8').split('\n').filter((line) => line !== '');
        for (const line of lines) found.push({ part, row: JSON.parse(line) as Record<string, unknown> });
      }
    }
  }
  return found;
}
