import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import type { RunHandle } from '../../src/export/run/run-progress.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { createFakeClock } from '../support/fake-clock.js';
import { liveKeys } from '../support/instances.js';
import { instancesProxy } from '../support/instances-proxy.js';
import { captureLogger } from '../support/log-capture.js';
import { ndjsonRows } from '../support/ndjson-rows.js';
import type { ScriptedServer } from '../support/scripted-server.js';

/**
 * An instances stream is counted when its run starts (`POST /models/instances/aggregate`, the
 * stream's view, type, filter and spaces): the count is its progress total and the base of its
 * read limit (source.maxReadFactor). An incremental stream's changes run shows no total (it reads
 * what changed, not the view). A count the platform does not give leaves the stream without a
 * total and without a read limit, logged, and the export goes on.
 */
const ASSET_VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const SPACES = ['sim_site_a', 'sim_site_c'];
const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
  removeTempDirs();
});

async function simulator(): Promise<Simulator> {
  const instances = { assets: 900, activities: 0, timeseries: 0, edges: 0 };
  const sim = await startSimulator({ seed: 23, apiKeys: [SIM_KEY], instances });
  open.push(sim);
  return sim;
}

async function proxied(sim: Simulator, options: Parameters<typeof instancesProxy>[1] = {}): Promise<ScriptedServer> {
  const server = await instancesProxy(sim, options);
  open.push(server);
  return server;
}

/** Runs the assets stream against `baseUrl` in process; the progress handle it gave, and its log. */
function runner(baseUrl: string, stream: Record<string, unknown>) {
  const dir = tempDir('instances-count-');
  const out = join(dir, 'out');
  const config = loadJob(dir, {
    baseUrl,
    out,
    streams: [{ resource: 'instances', name: 'assets', view: ASSET_VIEW, limit: 200, ...stream }],
    output: { formats: ['ndjson'] },
  });
  const clock = createFakeClock(Date.UTC(2026, 5, 1));
  return {
    out,
    run: async () => {
      clock.advance(60_000);
      const captured = captureLogger('info');
      let handle: RunHandle | undefined;
      const result = await runJob({ config, logger: captured.logger, clock, onStart: (run) => (handle = run) });
      return { result, streams: handle?.streams(), captured };
    },
  };
}

describe('the count of an instances stream', () => {
  it('is asked with the view, the type, the filter and the spaces, and is the progress total', async () => {
    const sim = await simulator();
    const server = await proxied(sim);
    const selected = liveKeys(sim, 'asset', (instance) => SPACES.includes(instance.space)).length;
    const { result, streams } = await runner(server.baseUrl, { spaces: SPACES, split: 'space' }).run();
    expect(result.state).toBe('complete');
    expect(streams).toEqual([{ name: 'assets', rows: selected, total: selected, partitions: 2, done: 2 }]);
    const counted = server.requests.filter((request) => request.url.endsWith('/models/instances/aggregate'));
    expect(counted.map((request) => JSON.parse(request.body) as unknown)).toEqual([
      {
        view: { type: 'view', ...ASSET_VIEW },
        instanceType: 'node',
        filter: { in: { property: ['node', 'space'], values: SPACES } },
        aggregates: [{ count: { property: 'externalId' } }],
      },
    ]);
  });

  it("incremental: the backfill's total is the view's count; a changes run shows none, as it reads what changed", async () => {
    const sim = await simulator();
    const job = runner(sim.baseUrl, { mode: 'incremental' });
    const backfill = await job.run();
    expect(backfill.streams).toEqual([{ name: 'assets', rows: 900, total: 900, partitions: 1, done: 1 }]);
    const { space, externalId } = sim.instances.instance('asset', 5);
    sim.updateInstances([{ instanceType: 'node', space, externalId }]);
    const changes = await job.run();
    expect(changes.result.state).toBe('complete');
    expect(changes.streams).toEqual([{ name: 'assets', rows: 1, total: undefined, partitions: 1, done: 1 }]);
  });

  it.each<[string, { status: number; body: unknown }]>([
    ['an error status', { status: 400, body: { error: { code: 400, message: 'aggregates are not served here' } } }],
    ['an answer that is not a count', { status: 200, body: { items: [{ instanceType: 'node', aggregates: [] }] } }],
  ])('that fails (%s): no total and no read limit, logged; the export is whole', async (_, failure) => {
    const sim = await simulator();
    const server = await proxied(sim, { answer: (path) => (path === '/models/instances/aggregate' ? failure : undefined) });
    const job = runner(server.baseUrl, {});
    const { result, streams, captured } = await job.run();
    expect(result.state).toBe('complete');
    expect(streams).toEqual([{ name: 'assets', rows: 900, total: undefined, partitions: 1, done: 1 }]);
    const logged = captured.records().find((record) => String(record.msg).startsWith('no instance count for assets'));
    expect(logged).toMatchObject({ level: 30, stream: 'assets' });
    expect(String(logged?.msg)).toContain('(progress shows no total, and no read limit applies)');
    expect(ndjsonRows(join(job.out, 'assets'))).toHaveLength(900);
  });
});
