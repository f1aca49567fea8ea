import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { READ_LIMIT_SLACK } from '../../src/export/partition/read-limit.js';
import type { Simulator } from '../../src/simulator/index.js';
import { SIM_KEY } from '../support/export-harness.js';
import { type Body, forward, instancesProxy } from '../support/instances-proxy.js';
import { type InstanceItem, keyOf, listAll, type SyncAnswer } from '../support/instances.js';
import { ndjsonRows } from '../support/ndjson-rows.js';
import { describeExit, newSimulator, readCheckpoint, runCliWith, tempDir } from '../support/resume-harness.js';
import type { ScriptedServer } from '../support/scripted-server.js';

/**
 * A broken or hostile platform in front of the simulator's data model (a proxy that passes every
 * request on, but those a case breaks) can fail an instances stream, never make it exit 0 with
 * instances it should not have written, nor read without end: an answer that ignores the query's
 * split is refused as a broken answer (E_BAD_RESPONSE), list and sync; a list or a feed that sends
 * instances again under ever new cursors stops at the read limit (E_READ_LIMIT) against the view's
 * count. Each run is the real CLI; what it committed before it stopped stays, and no _SUCCESS.
 */
const ASSET_VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const SPACES = ['sim_site_a', 'sim_site_b', 'sim_site_c'];
const ASSETS = 2000;
const servers: ScriptedServer[] = [];

afterAll(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function assetsSimulator(): Promise<Simulator> {
  const instances = { assets: ASSETS, activities: 0, timeseries: 0, edges: 0 };
  return newSimulator({ seed: 7, apiKeys: [SIM_KEY], instances });
}

/** A proxy in front of `sim` (instancesProxy), closed after the file's tests. */
async function proxy(sim: Simulator, options: Parameters<typeof instancesProxy>[1]): Promise<ScriptedServer> {
  const server = await instancesProxy(sim, options);
  servers.push(server);
  return server;
}

/** Runs one assets stream (NDJSON, pages of 500) against the proxy with the CLI, `--json`. */
async function runAssets(server: ScriptedServer, stream: Body) {
  const dir = tempDir('instances-hostile');
  const out = join(dir, 'out');
  const file = join(dir, 'job.yaml');
  const job = {
    source: { baseUrl: server.baseUrl, auth: { type: 'api-key', apiKey: '${K}' }, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } },
    streams: [{ resource: 'instances', name: 'assets', view: ASSET_VIEW, limit: 500, ...stream }],
    output: { dir: out, formats: ['ndjson'], shard: { maxRows: 1000 } },
  };
  writeFileSync(file, stringify(job));
  const exit = await runCliWith(['run', '--config', file, '--json'], { cwd: dir, env: { K: SIM_KEY } });
  return { out, exit };
}

/** Every `_SUCCESS` under the output folder. */
function successes(out: string): string[] {
  return readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('_SUCCESS'));
}

/** Rows of the stream's NDJSON shards, incremental run folders included; none before its first shard. */
function rowsOf(out: string): Record<string, unknown>[] {
  const dir = join(out, 'assets');
  if (!existsSync(dir)) return [];
  const runs = readdirSync(dir).filter((name) => name.startsWith('run='));
  return runs.length === 0 ? ndjsonRows(dir) : runs.flatMap((run) => partRows(join(dir, run)));
}

/** Rows of the NDJSON shards in the `part=` folders of a run folder (which holds its manifest too). */
function partRows(dir: string): Record<string, unknown>[] {
  const files = readdirSync(dir)
    .filter((name) => name.startsWith('part='))
    .flatMap((part) => readdirSync(join(dir, part)).filter((name) => name.endsWith('.ndjson')).map((name) => join(dir, part, name)));
  const lines = files.flatMap((file) => readFileSync(file, 'utf8').split('\n').filter((line) => line !== ''));
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The split's condition taken out of a list's filter or a sync's: the platform ignores the split. */
function withoutSplit(path: string, body: Body): Body {
  if (path === '/models/instances/list') {
    const { filter: _ignored, ...rest } = body;
    return rest;
  }
  if (path === '/models/instances/sync') {
    const set = (body.with as { instances: { nodes: { filter: { and: unknown[] } } } }).instances;
    return { ...body, with: { instances: { ...set, nodes: { filter: set.nodes.filter.and[0] } } } };
  }
  return body;
}

interface RunOutput {
  state: string;
  errors: { code: string; stream: string; partition: number; message?: string }[];
}

describe.concurrent('an answer that ignores the query of a split', () => {
  it.each<[string, Body, string, string]>([
    ['list, split: space', { spaces: SPACES, split: 'space' }, '/models/instances/list', 'space "sim_site_'],
    [
      'list, split by externalId',
      { split: { property: 'externalId', at: ['AST-000000700', 'AST-000001400'] } },
      '/models/instances/list',
      'externalId ',
    ],
    ['sync, split: space', { spaces: SPACES, split: 'space', mode: 'incremental' }, '/models/instances/sync', 'space "sim_site_'],
  ])('%s: refused as a broken answer (E_BAD_RESPONSE) naming the instance, the query and the request; no _SUCCESS', async (_, stream, path, scope) => {
    const sim = await assetsSimulator();
    const server = await proxy(sim, { rewrite: withoutSplit });
    const { out, exit } = await runAssets(server, stream);
    const rows = rowsOf(out);
    const keys = new Set(rows.map((row) => keyOf(row as { space: string; externalId: string })));
    expect(exit.code, `exit ${exit.code}: ${rows.length} rows for ${keys.size} keys\n${describeExit(exit)}`).toBe(1);
    const output = JSON.parse(exit.stdout) as RunOutput;
    expect(output.state).toBe('failed');
    expect(output.errors.map((error) => error.code)).toContain('E_BAD_RESPONSE');
    // In the log's JSON, the quotes around the instance's space and externalId are escaped.
    const instance = /Instance \d+ of the page, \\"sim_site_[abc]\\":\\"AST-\d+\\", /;
    expect(exit.stderr).toMatch(new RegExp(`${instance.source}is not one that query \\d/3 of assets asks for`));
    expect(exit.stderr).toContain(`asks for (${scope.replaceAll('"', '\\"')}`);
    expect(exit.stderr).toContain(`POST /api/v1/projects/scripted${path}, request id scripted-`);
    // Nothing outside its query was written: every row once, in its own query's folder.
    expect(rows.length).toBe(keys.size);
    expect(successes(out)).toEqual([]);
  });
});

describe.concurrent('instances sent again under ever new cursors: stopped past maxReadFactor x the view\'s count (E_READ_LIMIT)', () => {
  /** The read limit of the 2,000 assets the simulator counts. */
  const limit = 2 * ASSETS + READ_LIMIT_SLACK;
  /** Pages a hostile answer gives before it ends (so that a run without a limit ends too), far past the limit. */
  const PAGES = 200;

  it('a sync feed that never catches up, the same 500 instances on every page: committed rows kept, no _SUCCESS', async () => {
    const sim = await assetsSimulator();
    let first: SyncAnswer | undefined;
    let pages = 0;
    const server = await proxy(sim, {
      answer: async (path, body) => {
        if (path !== '/models/instances/sync') return undefined;
        first ??= (await forward(sim, 'POST', path, body)).json<SyncAnswer>();
        pages++;
        // Full pages (the limit's 500), never caught up; an empty one after PAGES ends it.
        const items = pages < PAGES ? first.items : { instances: [] };
        return { body: { ...first, items, nextCursor: { instances: `fresh-${pages}` } } };
      },
    });
    const { out, exit } = await runAssets(server, { mode: 'incremental' });
    const rows = rowsOf(out);
    expect(exit.code, `exit ${exit.code}: ${rows.length} rows in ${pages} pages\n${describeExit(exit)}`).toBe(1);
    expect(JSON.parse(exit.stdout)).toMatchObject({ state: 'failed', errors: [{ code: 'E_READ_LIMIT', stream: 'assets', partition: 1 }] });
    expect(exit.stderr).toContain('assets partition 1/1: the stream has read');
    expect(exit.stderr).toContain(`more than 2 times the ${ASSETS.toLocaleString('en-US')} items the platform counts in it`);
    // The page past the limit, and at most the one fetched ahead of it.
    expect(pages).toBeLessThanOrEqual(Math.floor(limit / 500) + 2);
    const committed = readCheckpoint(out).streams.assets?.parts['1']?.rows ?? 0;
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThanOrEqual(limit);
    expect(rows.length).toBe(committed);
    expect(successes(out)).toEqual([]);
  });

  it('a list that rotates: 499 instances of the page before and one new on every page: committed rows kept, no _SUCCESS', async () => {
    const sim = await assetsSimulator();
    const all: InstanceItem[] = (await listAll(sim, { sources: [{ source: { type: 'view', ...ASSET_VIEW } }], limit: 1000 }, { 'api-key': SIM_KEY }))
      .flatMap((page) => page.items);
    expect(all).toHaveLength(ASSETS);
    let pages = 0;
    const server = await proxy(sim, {
      answer: (path, body) => {
        if (path !== '/models/instances/list') return undefined;
        const at = typeof body.cursor === 'string' ? Number(body.cursor.slice(1)) : 0;
        pages++;
        return { body: { items: all.slice(at, at + 500), ...(at + 1 < PAGES ? { nextCursor: `c${at + 1}` } : {}) } };
      },
    });
    const { out, exit } = await runAssets(server, {});
    const rows = rowsOf(out);
    const keys = new Set(rows.map((row) => keyOf(row as { space: string; externalId: string })));
    expect(exit.code, `exit ${exit.code}: ${rows.length} rows for ${keys.size} keys\n${describeExit(exit)}`).toBe(1);
    expect(JSON.parse(exit.stdout)).toMatchObject({ state: 'failed', errors: [{ code: 'E_READ_LIMIT', stream: 'assets', partition: 1 }] });
    expect(pages).toBeLessThanOrEqual(Math.floor(limit / 500) + 2);
    const committed = readCheckpoint(out).streams.assets?.parts['1']?.rows ?? 0;
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThanOrEqual(limit);
    expect(successes(out)).toEqual([]);
  });
});
