import { beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import {
  describeExit,
  expectExactOutput,
  type IdStats,
  newJob,
  newSimulator,
  runCliWith,
} from '../support/resume-harness.js';

/**
 * Events with no end (`endTime: {isNull: true}`), `labels` on assets, files and relationships, and
 * events of 150 assets (more than GET takes), end to end through the CLI: each stream is listed by
 * POST with the platform's body form, and its output holds exactly the items the filter means,
 * judged here from the generated items (not by the simulator's own filter code).
 */
const KEY = 'platform-filters-e2e-key';
let sim: Simulator;

beforeAll(async () => {
  sim = await newSimulator({
    events: 3000,
    assets: 600,
    files: 800,
    relationships: 1000,
    seed: 53,
    apiKeys: [KEY],
    recordRequests: true,
  });
});

interface Item {
  id?: number;
  externalId?: string;
  endTime?: number;
  assetIds?: number[];
  labels?: { externalId: string }[];
}
type Collection = 'assets' | 'events' | 'files' | 'relationships';

/** The id statistics (or, for relationships, the sorted keys) of the generated items that pass `keep`. */
function expected(resource: Collection, keep: (item: Item) => boolean): IdStats {
  const set = sim.dataset[resource] as unknown as { count: number; item(index: number): Item };
  const ids: bigint[] = [];
  const keys: string[] = [];
  for (let i = 0; i < set.count; i++) {
    const item = set.item(i);
    if (!keep(item)) continue;
    if (resource === 'relationships') keys.push(String(item.externalId));
    else ids.push(BigInt(item.id ?? 0));
  }
  if (resource === 'relationships') return { count: keys.length, sum: 0n, min: 0n, max: 0n, keys: keys.sort() };
  const sorted = ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { count: ids.length, sum: ids.reduce((a, b) => a + b, 0n), min: sorted[0] ?? 0n, max: sorted.at(-1) ?? 0n };
}

const labelsOf = (item: Item) => new Set((item.labels ?? []).map((label) => label.externalId));

/** The two labels most often held together by one item of the collection. */
function commonPair(resource: Collection): [string, string] {
  const set = sim.dataset[resource] as unknown as { count: number; item(index: number): Item };
  const counts = new Map<string, number>();
  for (let i = 0; i < set.count; i++) {
    const labels = [...labelsOf(set.item(i))].sort();
    if (labels.length === 2) counts.set(labels.join('\n'), (counts.get(labels.join('\n')) ?? 0) + 1);
  }
  const [pair] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [];
  if (pair === undefined) throw new Error(`no ${resource} with two labels`);
  return pair.split('\n') as [string, string];
}

describe('endTime {isNull}, labels and 150 assetIds, through the CLI', () => {
  it('each stream is listed by POST with the platform body form and holds exactly the items meant', async () => {
    const assetIds = Array.from({ length: 150 }, (_, i) => sim.dataset.assets.idOf(i * 4));
    const filePair = commonPair('files');
    const relationshipPair = commonPair('relationships');
    const job = newJob(
      sim,
      [
        { resource: 'events', name: 'open', partitions: 3, limit: 200, filter: { endTime: { isNull: true } } },
        { resource: 'events', name: 'of-assets', partitions: 2, limit: 300, filter: { assetIds } },
        { resource: 'assets', name: 'pumps', partitions: 2, filter: { labels: { containsAny: ['pump', { externalId: 'critical' }] } } },
        { resource: 'files', name: 'files-both', filter: { labels: { containsAll: filePair } } },
        { resource: 'relationships', name: 'links-both', partitions: 2, filter: { labels: { containsAll: relationshipPair } } },
      ],
      {},
      'platform-filters',
    );
    const before = sim.requests().length;
    const exit = await runCliWith(['run', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    expect(exit.code, describeExit(exit)).toBe(0);

    const linked = new Set(assetIds);
    const holdsAll = (pair: readonly string[]) => (item: Item) => pair.every((label) => labelsOf(item).has(label));
    const streams = [
      { name: 'open', resource: 'events' as const, partitions: 3, ids: expected('events', (e) => e.endTime === undefined) },
      { name: 'of-assets', resource: 'events' as const, partitions: 2, ids: expected('events', (e) => (e.assetIds ?? []).some((id) => linked.has(id))) },
      { name: 'pumps', resource: 'assets' as const, partitions: 2, ids: expected('assets', (a) => labelsOf(a).has('pump') || labelsOf(a).has('critical')) },
      { name: 'files-both', resource: 'files' as const, partitions: 10, ids: expected('files', holdsAll(filePair)) },
      { name: 'links-both', resource: 'relationships' as const, partitions: 2, ids: expected('relationships', holdsAll(relationshipPair)) },
    ];
    for (const stream of streams) expect(stream.ids.count, stream.name).toBeGreaterThan(0);
    expect(streams[0]?.ids.count).toBeLessThan(3000);
    await expectExactOutput(job.out, streams.map((stream) => ({ ...stream, formats: job.spec.formats ?? [] })));

    const requests = sim.requests().slice(before);
    expect(requests.filter((r) => r.route.startsWith('GET /events') || r.route.startsWith('GET /assets'))).toEqual([]);
    const bodies = (route: string) =>
      requests.filter((r) => r.route === route).map((r) => r.body as { filter?: Record<string, unknown> });
    expect(bodies('POST /events/list').some((body) => JSON.stringify(body.filter?.endTime) === '{"isNull":true}')).toBe(true);
    expect(bodies('POST /events/list').some((body) => JSON.stringify(body.filter?.assetIds) === JSON.stringify(assetIds))).toBe(true);
    const fileLabels = { containsAll: filePair.map((externalId) => ({ externalId })) };
    expect(bodies('POST /files/list').every((body) => JSON.stringify(body.filter?.labels) === JSON.stringify(fileLabels))).toBe(true);
    // The counts that give progress totals count with the same filters.
    expect(bodies('POST /events/aggregate').map((body) => Object.keys(body.filter ?? {}).sort())).toEqual(
      expect.arrayContaining([['endTime', 'lastUpdatedTime'], ['assetIds', 'lastUpdatedTime']]),
    );
  });

  it('the dry run shows the POST of 150 assetIds cut to its first 5 and a count', async () => {
    const assetIds = Array.from({ length: 150 }, (_, i) => sim.dataset.assets.idOf(i));
    const job = newJob(sim, [{ resource: 'events', partitions: 1, filter: { assetIds } }], {}, 'platform-filters-dry');
    const dry = await runCliWith(['run', '--config', job.file, '--dry-run'], { cwd: job.dir, env: { SIM_KEY: KEY } });
    expect(dry.code, describeExit(dry)).toBe(0);
    expect(dry.stdout).toContain(`"assetIds":${JSON.stringify([...assetIds.slice(0, 5), '... 145 more'])}`);
    expect(dry.stdout).toMatch(/stream events: POST \/events\/list /);
    expect(dry.stdout).toContain('\n1 cursor chain; at most');
  });
});
