import { readFileSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  closedForm,
  describeExit,
  expectExactOutput,
  listFiles,
  newSimulator,
  runCliWith,
  snapshot,
  type StreamSpec,
  tempDir,
  writeJob,
} from '../support/resume-harness.js';

/**
 * `bulk-extract repair`: verify finds the damaged partitions, and only those
 * are forgotten and read again from their first page; the other partitions' files keep their bytes
 * and modification times. Damage: a deleted shard, a truncated one, one byte flipped in place.
 */
const KEY = 'repair-key-0001';
const EVENTS = 8000;
const ASSETS = 300;
const STREAMS: StreamSpec[] = [
  { resource: 'events', partitions: 4, limit: 1000 },
  { resource: 'assets', partitions: 1, limit: 1000 },
];
const EXPECTED = [
  { name: 'events', resource: 'events' as const, partitions: 4, formats: ['parquet' as const, 'ndjson' as const], ids: closedForm('events', EVENTS) },
  { name: 'assets', resource: 'assets' as const, partitions: 1, formats: ['parquet' as const, 'ndjson' as const], ids: closedForm('assets', ASSETS) },
];

async function finishedExport() {
  const sim = await newSimulator({ events: EVENTS, assets: ASSETS, seed: 53, apiKeys: [KEY], recordRequests: true });
  const dir = tempDir('repair');
  const out = join(dir, 'out');
  const file = writeJob(join(dir, 'job.yaml'), { baseUrl: sim.baseUrl, outDir: out, streams: STREAMS, maxRows: 1000 });
  const cli = (args: string[]) => runCliWith([...args, '--config', file], { cwd: dir, env: { SIM_KEY: KEY } });
  const first = await cli(['run']);
  expect(first.code, describeExit(first)).toBe(0);
  return { sim, out, cli };
}

/** Path -> mtime of every file under a folder. */
function mtimes(out: string, prefix: string): Record<string, number> {
  const paths = listFiles(out).filter((p) => p.startsWith(prefix));
  return Object.fromEntries(paths.map((p) => [p, statSync(join(out, p)).mtimeMs]));
}

describe.concurrent('bulk-extract repair', () => {
  it('reads again exactly the damaged partitions (deleted, truncated, flipped byte) and leaves the others untouched', async () => {
    const { sim, out, cli } = await finishedExport();
    unlinkSync(join(out, 'events/part=1-of-4/000001.parquet'));
    truncateSync(join(out, 'events/part=2-of-4/000000.ndjson'), 1000);
    const flipped = join(out, 'events/part=3-of-4/000001.parquet');
    const bytes = readFileSync(flipped);
    const middle = Math.floor(bytes.length / 2);
    bytes[middle] = (bytes[middle] ?? 0) ^ 0xff;
    writeFileSync(flipped, bytes);

    const verify = await runCliWith(['verify', out]);
    expect(verify.code, 'verify finds the damage').toBe(1);
    const untouched = (p: string) => p.startsWith('events/part=4-of-4/') || p.startsWith('assets/');
    const before = Object.fromEntries(Object.entries(snapshot(out)).filter(([p]) => untouched(p)));
    const beforeTimes = { ...mtimes(out, 'events/part=4-of-4/'), ...mtimes(out, 'assets/') };
    const from = sim.requests().length;

    const repair = await cli(['repair']);
    expect(repair.code, describeExit(repair)).toBe(0);
    expect(repair.stderr).toContain('read 3 damaged partition(s) again: events/1, events/2, events/3');
    // Only the damaged partitions were read, each from its first page.
    const lists = sim.requests().slice(from).filter((r) => r.route === 'GET /events' || r.route === 'GET /assets');
    const partitions = new Set(lists.map((r) => `${r.route} ${new Map(r.params).get('partition')}`));
    expect([...partitions].sort()).toEqual(['GET /events 1/4', 'GET /events 2/4', 'GET /events 3/4']);
    expect(lists.filter((r) => !new Map(r.params).has('cursor'))).toHaveLength(3);

    const after = Object.fromEntries(Object.entries(snapshot(out)).filter(([p]) => untouched(p)));
    expect(after, 'the other partitions\' bytes').toEqual(before);
    expect({ ...mtimes(out, 'events/part=4-of-4/'), ...mtimes(out, 'assets/') }, 'their modification times').toEqual(beforeTimes);
    await expectExactOutput(out, EXPECTED);
    expect((await runCliWith(['verify', out])).code).toBe(0);
  });

  it('with nothing damaged: says so and changes nothing; run --repair is the same command', async () => {
    const { out, cli } = await finishedExport();
    const before = snapshot(out);
    const repair = await cli(['run', '--repair']);
    expect(repair.code, describeExit(repair)).toBe(0);
    expect(repair.stderr).toContain('every shard matches the manifest; nothing to repair');
    expect(snapshot(out)).toEqual(before);
  });
});
