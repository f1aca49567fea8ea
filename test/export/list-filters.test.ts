import { beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import {
  describeExit,
  expectedIds,
  expectExactOutput,
  newJob,
  newSimulator,
  runCliWith,
  writeJob,
} from '../support/resume-harness.js';

/**
 * The list filters `metadata`, `externalIdPrefix` and assets' `source`, end to end. `metadata`:
 * the platform takes it only in the body of `POST /{resource}/list`, so a stream that sets it is
 * listed by POST, every request of a chain the first one plus only `cursor`; the export holds
 * exactly the items whose metadata has every pair, in both formats; another metadata filter on
 * resume is drift. `externalIdPrefix`: GET takes it, so the chains stay GETs.
 */
const KEY = 'metadata-filter-key-01';
let sim: Simulator;

beforeAll(async () => {
  sim = await newSimulator({ events: 4000, assets: 400, seed: 41, apiKeys: [KEY], recordRequests: true });
});

/** A key-value pair that some, not most, of the collection's items hold. */
function commonPair(resource: 'assets' | 'events'): Record<string, string> {
  const set = sim.dataset[resource];
  const counts = new Map<string, number>();
  for (let i = 0; i < set.count; i++) {
    for (const [key, value] of Object.entries(set.item(i).metadata ?? {})) {
      const pair = JSON.stringify([key, value]);
      counts.set(pair, (counts.get(pair) ?? 0) + 1);
    }
  }
  const [pair] = [...counts].filter(([, n]) => n >= 5 && n <= set.count * 0.5).sort((a, b) => b[1] - a[1])[0] ?? [];
  if (pair === undefined) throw new Error(`no common metadata pair among ${resource}`);
  const [key, value] = JSON.parse(pair) as [string, string];
  return { [key]: value };
}

const run = (file: string, dir: string, args: string[] = []) =>
  runCliWith(['run', '--config', file, ...args], { cwd: dir, env: { SIM_KEY: KEY } });

describe('filter.metadata', () => {
  it('lists by POST /list, every follow-up the first body plus cursor; the output is exactly the matching items', async () => {
    const events = commonPair('events');
    const assets = commonPair('assets');
    const job = newJob(
      sim,
      [
        { resource: 'events', partitions: 3, limit: 200, filter: { metadata: events, type: String(sim.dataset.events.item(0).type) } },
        { resource: 'assets', partitions: 1, limit: 50, filter: { metadata: assets } },
      ],
      {},
      'metadata-filter',
    );
    const before = sim.requests().length;
    const exit = await run(job.file, job.dir);
    expect(exit.code, describeExit(exit)).toBe(0);

    const eventFilter = { metadata: events, type: String(sim.dataset.events.item(0).type) };
    const expected = [
      { name: 'events', resource: 'events' as const, partitions: 3, formats: job.spec.formats ?? [], ids: expectedIds(sim, 'events', eventFilter) },
      { name: 'assets', resource: 'assets' as const, partitions: 1, formats: job.spec.formats ?? [], ids: expectedIds(sim, 'assets', { metadata: assets }) },
    ];
    expect(expected[0]?.ids.count).toBeGreaterThan(0);
    expect(expected[1]?.ids.count).toBeGreaterThan(0);
    await expectExactOutput(job.out, expected);

    const requests = sim.requests().slice(before);
    expect(requests.filter((r) => r.route === 'GET /events' || r.route === 'GET /assets')).toEqual([]);
    for (const resource of ['events', 'assets']) {
      const chains = new Map<string, unknown[]>();
      for (const request of requests.filter((r) => r.route === `POST /${resource}/list`)) {
        const { cursor, ...rest } = request.body as Record<string, unknown>;
        const key = JSON.stringify(rest);
        chains.set(key, [...(chains.get(key) ?? []), cursor]);
      }
      // One body per partition, each sent first without a cursor and then only with cursors.
      expect(chains.size, resource).toBe(resource === 'events' ? 3 : 1);
      for (const [body, cursors] of chains) {
        expect(JSON.parse(body)).toMatchObject({ filter: { metadata: resource === 'events' ? events : assets } });
        expect(cursors[0], body).toBeUndefined();
        expect(cursors.slice(1).every((c) => typeof c === 'string'), body).toBe(true);
      }
    }
    // The count that proves the credential counts with the same filter.
    const counts = requests.filter((r) => r.route === 'POST /events/aggregate');
    const counted = expect.objectContaining({ filter: expect.objectContaining({ metadata: events }) });
    expect(counts.map((r) => r.body)).toEqual([counted]);
  });

  it('the dry run shows the POST and its body; another metadata filter on resume is drift, refused', async () => {
    const pair = commonPair('events');
    const job = newJob(sim, [{ resource: 'events', partitions: 2, filter: { metadata: pair } }], {}, 'metadata-drift');
    const dry = await run(job.file, job.dir, ['--dry-run']);
    expect(dry.code, describeExit(dry)).toBe(0);
    const listed = /stream events: POST \/events\/list \{"limit":1000,"filter":\{.*"metadata":\{.*\}\}\} in 2 /;
    expect(dry.stdout).toMatch(listed);
    expect(dry.stdout).toContain(JSON.stringify(pair));

    expect((await run(job.file, job.dir)).code).toBe(0);
    const [key = ''] = Object.keys(pair);
    writeJob(job.file, { ...job.spec, streams: [{ resource: 'events', partitions: 2, filter: { metadata: { [key]: 'another value' } } }] });
    const drift = await run(job.file, job.dir);
    expect(drift.code, describeExit(drift)).toBe(2);
    expect(drift.stderr).toMatch(/differ from the run recorded/);
    expect(drift.stderr).toContain('metadata');
  });
});

describe('filter.externalIdPrefix', () => {
  it('GET takes it: the export lists by GET and holds exactly the items whose externalId starts with it', async () => {
    const job = newJob(
      sim,
      [
        { resource: 'events', partitions: 3, limit: 100, filter: { externalIdPrefix: 'EV-0000' } },
        { resource: 'assets', partitions: 2, limit: 100, filter: { externalIdPrefix: 'AS-00001' } },
      ],
      {},
      'prefix-filter',
    );
    const before = sim.requests().length;
    const exit = await run(job.file, job.dir);
    expect(exit.code, describeExit(exit)).toBe(0);
    const formats = job.spec.formats ?? [];
    const events = expectedIds(sim, 'events', { externalIdPrefix: 'EV-0000' });
    const assets = expectedIds(sim, 'assets', { externalIdPrefix: 'AS-00001' });
    expect(events.count).toBe(36 * 36);
    expect(assets.count).toBe(36);
    await expectExactOutput(job.out, [
      { name: 'events', resource: 'events', partitions: 3, formats, ids: events },
      { name: 'assets', resource: 'assets', partitions: 2, formats, ids: assets },
    ]);
    const routes = new Set(sim.requests().slice(before).map((r) => r.route));
    expect([...routes].sort()).toEqual(['GET /assets', 'GET /events', 'POST /assets/aggregate', 'POST /events/aggregate']);
  });
});

describe('filter.source on assets', () => {
  it('GET takes it: the export holds exactly the assets of that source, in both formats', async () => {
    const source = String(sim.dataset.assets.item(1).source ?? sim.dataset.assets.item(2).source);
    const job = newJob(sim, [{ resource: 'assets', partitions: 2, limit: 50, filter: { source } }], {}, 'asset-source');
    const exit = await run(job.file, job.dir);
    expect(exit.code, describeExit(exit)).toBe(0);
    const ids = expectedIds(sim, 'assets', { source });
    expect(ids.count).toBeGreaterThan(0);
    expect(ids.count).toBeLessThan(sim.dataset.assets.count);
    const formats = job.spec.formats ?? [];
    await expectExactOutput(job.out, [{ name: 'assets', resource: 'assets', partitions: 2, formats, ids }]);
  });
});
