import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runId } from '../../src/export/state/checkpoint.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { RESOURCES, type Resource } from '../../src/resources/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';

/**
 * `--churn` (in-process `churn`) rehearses `mode: incremental` without code: the simulator updates and
 * inserts items of the six collections as its clock passes, and each incremental run reads exactly the
 * versions of its window: the first run the generated collections, the next ones what churn changed
 * (new versions of items it had, with a changed field, and new items with new ids), each version once.
 */
const LAG_MS = 60_000;
const MINUTE = 60_000;
// After every generated lastUpdatedTime (2019 .. 2026), so the first window holds the whole collections.
const T0 = Date.UTC(2027, 5, 1);
const KEYS: Record<Resource, 'id' | 'externalId'> = {
  assets: 'id', events: 'id', timeseries: 'id', files: 'id', sequences: 'id', relationships: 'externalId',
};

type Row = Record<string, unknown> & { lastUpdatedTime: number };

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  removeTempDirs();
});

async function churningSimulator(clock: FakeClock): Promise<Simulator> {
  return startSimulator({
    assets: 400, events: 2000, timeseries: 200, files: 200, sequences: 100, relationships: 300,
    datapoints: 0, seed: 31, churn: 2, apiKeys: [SIM_KEY], clock,
  });
}

/** The rows of one run folder of a stream, from its NDJSON shards. */
function rowsIn(out: string, resource: Resource, run: string): Row[] {
  const dir = join(out, resource, `run=${run}`);
  return readdirSync(dir).filter((name) => name.startsWith('part=')).flatMap((part) =>
    readdirSync(join(dir, part)).filter((name) => name.endsWith('.ndjson')).flatMap((file) =>
      readFileSync(join(dir, part, file), 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Row)));
}

/** What the simulator serves now with lastUpdatedTime in [from, until), as `key@lastUpdatedTime`. */
function served(s: Simulator, resource: Resource, from: number | null, until: number): string[] {
  const set = s.dataset[resource];
  const versions: string[] = [];
  for (let i = 0; i < set.count; i++) {
    const item = set.item(i, false) as unknown as Row;
    const inWindow = (from === null || item.lastUpdatedTime >= from) && item.lastUpdatedTime < until;
    if (inWindow) versions.push(versionOf(resource, item));
  }
  return versions.sort();
}

function versionOf(resource: Resource, row: Row): string {
  return `${String(row[KEYS[resource]])}@${row.lastUpdatedTime}`;
}

describe('--churn: incremental rehearsal', () => {
  it('a second run holds exactly the updated and inserted items of its window, each version once', async () => {
    const clock = createFakeClock(T0);
    sim = await churningSimulator(clock);
    const out = join(tempDir(), 'out');
    const job = loadJob(join(out, '..'), {
      baseUrl: sim.baseUrl,
      out,
      streams: RESOURCES.map((resource) => ({ resource, mode: 'incremental', safetyLag: '1m', partitions: 3, limit: 100 })),
      output: { formats: ['ndjson'] },
    });
    const run = async () => {
      const result = await runJob({ config: job, logger: silentLogger, clock });
      expect(result.errors).toEqual([]);
      expect(result.state).toBe('complete');
    };

    await run();
    const first = new Map<Resource, Map<string, Row>>();
    for (const resource of RESOURCES) {
      const rows = rowsIn(out, resource, runId(T0));
      expect(rows.map((row) => versionOf(resource, row)).sort()).toEqual(served(sim, resource, null, T0 - LAG_MS));
      expect(rows).toHaveLength(sim.dataset[resource].generated);
      first.set(resource, new Map(rows.map((row) => [String(row[KEYS[resource]]), row])));
    }

    // 10 minutes at 2 changes a second: 1,200 changes, those of the last minute held back by the lag.
    clock.advance(10 * MINUTE);
    const t1 = T0 + 10 * MINUTE;
    await run();
    let updates = 0;
    let inserts = 0;
    for (const resource of RESOURCES) {
      const rows = rowsIn(out, resource, runId(t1));
      const versions = rows.map((row) => versionOf(resource, row));
      expect(new Set(versions).size, `${resource}: each version once`).toBe(versions.length);
      expect(versions.sort(), resource).toEqual(served(sim, resource, T0 - LAG_MS, t1 - LAG_MS));
      for (const row of rows) {
        expect(row.lastUpdatedTime).toBeGreaterThan(T0);
        const before = first.get(resource)?.get(String(row[KEYS[resource]]));
        if (before === undefined) {
          inserts++;
          // Created by the churn (then maybe updated again before the window's end).
          expect(row.createdTime).toBeGreaterThan(T0);
          expect(row.createdTime).toBeLessThanOrEqual(row.lastUpdatedTime);
          continue;
        }
        updates++;
        const changed = resource === 'relationships' ? 'confidence' : 'description';
        expect(row[changed], `${resource} ${String(row[KEYS[resource]])}: ${changed} changed`).not.toEqual(before[changed]);
        expect(row.createdTime).toBe(before.createdTime);
      }
      if (resource === 'events' || resource === 'assets') {
        expect(rows.length, `${resource}: changed in 9 minutes`).toBeGreaterThan(20);
      }
    }
    // 1,200 changes due, 1,080 of them before the window's end; an item changed twice is read once.
    expect(updates + inserts).toBeGreaterThan(600);
    expect(updates + inserts).toBeLessThanOrEqual(1080);
    expect(inserts).toBeGreaterThan(100);
    expect(updates).toBeGreaterThan(inserts);

    // Run 3 reads what the lag held back and what came since: every version of run 2 is older.
    clock.advance(10 * MINUTE);
    const t2 = t1 + 10 * MINUTE;
    await run();
    for (const resource of RESOURCES) {
      const versions = rowsIn(out, resource, runId(t2)).map((row) => versionOf(resource, row)).sort();
      expect(versions, resource).toEqual(served(sim, resource, t1 - LAG_MS, t2 - LAG_MS));
    }
  }, 120_000);

  it('the same seed and times make the same changes', async () => {
    const states: string[] = [];
    for (let k = 0; k < 2; k++) {
      const clock = createFakeClock(T0);
      const s = await churningSimulator(clock);
      clock.advance(5 * MINUTE);
      s.update('events', [], undefined); // a request's catch-up, through the sim API
      const items = RESOURCES.map((resource) => {
        const set = s.dataset[resource];
        return Array.from({ length: set.count }, (_, i) => set.item(i));
      });
      expect(RESOURCES.filter((resource) => s.dataset[resource].count > s.dataset[resource].generated)).not.toEqual([]);
      states.push(JSON.stringify(items));
      await s.close();
    }
    expect(states[1]).toBe(states[0]);
  });
});
