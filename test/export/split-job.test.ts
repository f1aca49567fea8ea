import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { EVENT_ID_BASE, EVENT_ID_STRIDE } from '../../src/simulator/index.js';
import {
  describeExit,
  type Exit,
  expectedIds,
  expectExactOutput,
  type ExpectedStream,
  listFiles,
  newJob,
  newSimulator,
  readCheckpoint,
  runCliWith,
  type StreamSpec,
} from '../support/resume-harness.js';

/**
 * Scale-out (`run --shard I/K`): real CLI processes, the workers of one split job, on one output
 * folder. Events: 12,000 in 6 partitions of 2 pages (limit 1000), shards of 1000 rows; assets: 600
 * in 2 partitions. The 8 (stream, partition) pairs go round-robin to 3 workers: 0 gets events 1
 * and 4 and assets 1; 1 gets events 2 and 5 and assets 2; 2 gets events 3 and 6.
 */
const KEY = 'shard-key-000001';
const STREAMS: StreamSpec[] = [
  { resource: 'events', partitions: 6, limit: 1000 },
  { resource: 'assets', partitions: 2, limit: 1000 },
];
const WORKER_1 = { events: ['2/6', '5/6'], assets: ['2/2'] };

async function setup(seed: number, streams = STREAMS) {
  const sim = await newSimulator({ events: 12_000, assets: 600, seed, apiKeys: [KEY], recordRequests: true });
  const job = newJob(sim, streams, { maxRows: 1000 }, 'split');
  const cli = (args: string[], env: Record<string, string> = {}): Promise<Exit> =>
    runCliWith([...args, '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });
  const expected: ExpectedStream[] = streams.map((s) => ({
    name: s.resource,
    resource: s.resource,
    partitions: s.partitions ?? 1,
    formats: ['parquet', 'ndjson'],
    ids: expectedIds(sim, s.resource),
  }));
  return { sim, job, cli, expected };
}

/** The `partition` parameter of the simulator's answered item requests, per resource. */
function partitionsRead(sim: Simulator, from = 0): Record<string, string[]> {
  const read: Record<string, Set<string>> = {};
  for (const request of sim.requests().slice(from)) {
    const match = /^GET \/(events|assets)$/.exec(request.route);
    if (match?.[1] === undefined || request.status !== 200) continue;
    const partition = request.params.find(([key]) => key === 'partition')?.[1] ?? '(none)';
    (read[match[1]] ??= new Set()).add(partition);
  }
  return Object.fromEntries(Object.entries(read).map(([resource, set]) => [resource, [...set].sort()]));
}

function pagesRead(sim: Simulator, from = 0): number {
  return sim.requests().slice(from).filter((r) => /^GET \/(events|assets)$/.test(r.route) && r.status === 200).length;
}

describe.concurrent('run --shard I/K: workers sharing one output folder', () => {
  it('3 workers started at once: each drains its own pairs, the last one finalizes, and the union is exact', async () => {
    const { sim, job, cli, expected } = await setup(11);
    const exits = await Promise.all([0, 1, 2].map((i) => cli(['run', '--shard', `${i}/3`])));
    for (const exit of exits) expect(exit.code, describeExit(exit)).toBe(0);

    // Each page was read once: 6 event partitions of 2 pages, 2 asset partitions of 1 page.
    expect(pagesRead(sim)).toBe(6 * 2 + 2);
    const partitionsPerShard = exits.map((exit) => /"partitions":(\d+)/.exec(exit.stderr)?.[1]);
    expect(partitionsPerShard).toEqual(['3', '3', '2']);
    const finalized = exits.filter((exit) => exit.stderr.includes('the split job is finalized'));
    expect(finalized.length, exits.map(describeExit).join('\n')).toBeGreaterThanOrEqual(1);

    await expectExactOutput(job.out, expected);
    expect(listFiles(job.out).filter((f) => f.startsWith('_workers'))).toEqual([]);
    const verify = await runCliWith(['verify', job.out], { cwd: job.dir });
    expect(verify.code, describeExit(verify)).toBe(0);

    // Finalized already: the folder is a complete export, and a finalize has nothing to do.
    const again = await cli(['finalize']);
    expect(again.code, describeExit(again)).toBe(0);
    expect(again.stderr).toContain('has no split job in progress');
  });

  it('a worker killed mid-run: the others complete, the run waits, and that worker resumes alone', { timeout: 120_000 }, async () => {
    const { sim, job, cli, expected } = await setup(12);
    // Worker 1 is killed once its second shard file is renamed into place (its first is committed).
    const exits = await Promise.all([
      cli(['run', '--shard', '0/3']),
      cli(['run', '--shard', '1/3'], { BULK_EXTRACT_CRASH_AT: 'after-shard-rename:2' }),
      cli(['run', '--shard', '2/3']),
    ]);
    expect(exits[1]?.signal, describeExit(exits[1])).toBe('SIGKILL');
    for (const i of [0, 2]) {
      expect(exits[i]?.code, describeExit(exits[i]!)).toBe(0);
      expect(exits[i]?.stderr).toMatch(new RegExp(`worker ${i}/3: complete; (worker [0-9] is|workers [0-9, ]+ are) not`));
    }
    // The later of the two saw the other one done: it waits for worker 1 only.
    expect(exits.filter((exit) => exit.stderr.includes('complete; worker 1 is not'))).not.toHaveLength(0);
    expect(existsSync(join(job.out, '_SUCCESS'))).toBe(false);

    const status = await cli(['status']);
    expect(status.code, describeExit(status)).toBe(0);
    expect(status.stdout).toMatch(/split job of 3 workers since .*: 0 complete, 1 not complete, 2 complete/);
    const finalize = await cli(['finalize']);
    expect(finalize.code, describeExit(finalize)).toBe(1);
    expect(finalize.stderr).toContain('workers 1 of 3 are not complete');

    // Worker 1's own checkpoint: the partitions it has left are what its resume reads.
    const agreement = JSON.parse(readFileSync(join(job.out, '_workers', 'agreement.json'), 'utf8')) as { id: string };
    const own = readCheckpoint(job.out, join(job.out, '_workers', agreement.id, 'worker-1-of-3.checkpoint.json'), 'some');
    const left: Record<string, string[]> = {};
    for (const [name, state] of Object.entries(own.streams)) {
      const undone = Object.entries(state.parts).filter(([, part]) => !part.done);
      if (undone.length > 0) left[name] = undone.map(([m]) => `${m}/${state.partitions}`).sort();
    }
    expect(Object.keys(own.streams.events?.parts ?? {}).map((m) => `${m}/6`)).toEqual(WORKER_1.events);
    expect(Object.keys(own.streams.assets?.parts ?? {}).map((m) => `${m}/2`)).toEqual(WORKER_1.assets);
    expect(left.events?.length).toBeGreaterThan(0);

    const before = sim.requests().length;
    const resumed = await cli(['run', '--shard', '1/3']);
    expect(resumed.code, describeExit(resumed)).toBe(0);
    expect(resumed.stderr).toMatch(/resuming export/);
    expect(resumed.stderr).toContain('removing a file written after the last checkpoint');
    expect(resumed.stderr).toContain('worker 1/3: complete, and the split job is finalized');
    // Only worker 1's unfinished pairs were read, and not all of their pages again.
    expect(partitionsRead(sim, before)).toEqual(left);
    // A page is a shard here (limit = maxRows = 1000): the resume reads the pages not committed.
    const pagesLeft = Object.entries(own.streams).reduce(
      (sum, [name, state]) =>
        sum + Object.values(state.parts).reduce((n, part) => n + (part.done ? 0 : (name === 'events' ? 2 : 1) - part.nextSeq), 0),
      0,
    );
    expect(pagesRead(sim, before)).toBe(pagesLeft);

    await expectExactOutput(job.out, expected);
    const verify = await runCliWith(['verify', job.out], { cwd: job.dir });
    expect(verify.code, describeExit(verify)).toBe(0);
  });

  it('a worker left unfinished is taken over by a run without --shard, which reads only what is left', async () => {
    const { sim, job, cli, expected } = await setup(13);
    const first = await cli(['run', '--shard', '0/2']);
    expect(first.code, describeExit(first)).toBe(0);
    expect(first.stderr).toContain('worker 0/2: complete; worker 1 is not');
    expect(pagesRead(sim)).toBe(3 * 2 + 1);

    const whole = await cli(['run']);
    expect(whole.code, describeExit(whole)).toBe(0);
    expect(whole.stderr).toContain('took over the progress of a split job');
    // Every page once: what worker 0 read was not read again.
    expect(pagesRead(sim)).toBe(6 * 2 + 2);
    await expectExactOutput(job.out, expected);
  });

  it('mode: incremental: a split first run, then runs without workers go on from its watermark', async () => {
    const streams: StreamSpec[] = [{ resource: 'events', mode: 'incremental', safetyLag: 0, partitions: 4, limit: 1000 }];
    const { sim, job, cli } = await setup(14, streams);
    const exits = await Promise.all([0, 1].map((i) => cli(['run', '--shards', '2'], { JOB_COMPLETION_INDEX: String(i) })));
    for (const exit of exits) expect(exit.code, describeExit(exit)).toBe(0);
    const run1 = readCheckpoint(job.out).streams.events!;
    const run1Dir = join(job.out, 'events', `run=${run1.run}`);
    expect(readdirSync(run1Dir)).toEqual(expect.arrayContaining(['_SUCCESS', '_manifest.json']));
    const sealed = JSON.parse(readFileSync(join(run1Dir, '_manifest.json'), 'utf8')) as { rows: number; files: unknown[] };
    expect(sealed.rows).toBe(12_000);
    expect(sealed.files).toHaveLength(4 * 3 * 2); // 4 partitions of 3 pages, a shard each, 2 formats

    const changed = [3, 500, 11_999];
    const at = Date.now();
    sim.update('events', changed, at);
    const next = await cli(['run']);
    expect(next.code, describeExit(next)).toBe(0);
    const run2 = readCheckpoint(job.out).streams.events!;
    expect(run2.window?.from).toBe(run1.window?.until);
    const lines = readdirSync(join(job.out, 'events', `run=${run2.run}`), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ndjson'))
      .flatMap((f) => readFileSync(join(job.out, 'events', `run=${run2.run}`, f), 'utf8').split('\n').filter(Boolean));
    const ids = lines.map((line) => (JSON.parse(line) as { id: number }).id).sort((a, b) => a - b);
    expect(ids).toEqual(changed.map((i) => EVENT_ID_BASE + i * EVENT_ID_STRIDE));
  });
});

describe.concurrent('run --shard: refused settings', () => {
  it('--shards without JOB_COMPLETION_INDEX, a bad I/K, --fresh with a worker: exit 2 naming the problem, nothing written', async () => {
    const { job, cli } = await setup(15);
    const cases: [string[], Record<string, string>, string][] = [
      [['run', '--shards', '4'], {}, 'JOB_COMPLETION_INDEX (set by Kubernetes in an Indexed Job), which is not set'],
      [['run', '--shard', '4/4'], {}, "--shard '4/4': expected I/K"],
      [['run', '--shard', '1/4'], { JOB_COMPLETION_INDEX: '2' }, 'but JOB_COMPLETION_INDEX is 2'],
      [['run', '--shard', '0/2', '--fresh'], {}, '--fresh cannot be combined with it'],
    ];
    for (const [args, env, message] of cases) {
      const exit = await cli(args, env);
      expect(exit.code, describeExit(exit)).toBe(2);
      expect(exit.stderr).toContain(message);
    }
    expect(existsSync(job.out)).toBe(false);
  });

  it('a worker with another K than the run in progress, or another config, is refused', async () => {
    const { job, cli } = await setup(16);
    const first = await cli(['run', '--shard', '0/3']);
    expect(first.code, describeExit(first)).toBe(0);
    const other = await cli(['run', '--shard', '1/2']);
    expect(other.code, describeExit(other)).toBe(2);
    expect(other.stderr).toContain('the split job in progress has 3 workers, this worker was given 2');
    const whileBusy = listFiles(job.out);
    expect(whileBusy).toContain('_workers/agreement.json');
  });

  it('mode: snapshot split among workers: each split job seals a snapshot when its last worker ends; _LATEST moves; keep 1 prunes', async () => {
    const streams: StreamSpec[] = [{ resource: 'assets', partitions: 2, limit: 1000, mode: 'snapshot', keep: 1 }];
    const { job, cli } = await setup(17, streams);
    const sealed = () => readdirSync(join(job.out, 'assets')).filter((name) => name.startsWith('run=')).sort();
    const latest = () => readFileSync(join(job.out, 'assets', '_LATEST'), 'utf8').trim();
    const seen: string[] = [];
    for (const round of [1, 2]) {
      const exits = await Promise.all([0, 1].map((i) => cli(['run', '--shard', `${i}/2`])));
      for (const exit of exits) expect(exit.code, describeExit(exit)).toBe(0);
      expect(sealed(), `round ${round}: keep 1`).toHaveLength(1);
      const [run] = sealed();
      expect(seen, `round ${round} wrote a new snapshot`).not.toContain(run);
      seen.push(run ?? '');
      expect(latest()).toBe(run);
      expect(existsSync(join(job.out, 'assets', run ?? '', '_SUCCESS'))).toBe(true);
      const rows = listFiles(join(job.out, 'assets', run ?? '')).filter((f) => f.endsWith('.ndjson'));
      const lines = rows.reduce((sum, f) => sum + readFileSync(join(job.out, 'assets', run ?? '', f), 'utf8').split('\n').length - 1, 0);
      expect(lines, `round ${round}: every asset once`).toBe(600);
    }
    const verify = await runCliWith(['verify', job.out], { cwd: job.dir });
    expect(verify.code, describeExit(verify)).toBe(0);
  });

  it('a split job an older version left under _shards/ (plan.json, shard-<i>-of-<k> files) is read and ended there', async () => {
    const { job, cli, expected } = await setup(18);
    const first = await cli(['run', '--shard', '0/2']);
    expect(first.code, describeExit(first)).toBe(0);
    // The same split job laid out as version 0.1 kept it: the formats are the same, the names are not.
    const workers = join(job.out, '_workers');
    const { id } = JSON.parse(readFileSync(join(workers, 'agreement.json'), 'utf8')) as { id: string };
    mkdirSync(join(job.out, '_shards', id), { recursive: true });
    renameSync(join(workers, 'agreement.json'), join(job.out, '_shards', 'plan.json'));
    for (const name of readdirSync(join(workers, id))) {
      renameSync(join(workers, id, name), join(job.out, '_shards', id, name.replace(/^worker-/, 'shard-')));
    }
    rmSync(workers, { recursive: true });

    const status = await cli(['status']);
    expect(status.stdout).toMatch(/split job of 2 workers since .*: 0 complete, 1 not started/);
    const second = await cli(['run', '--shard', '1/2']);
    expect(second.code, describeExit(second)).toBe(0);
    expect(second.stderr).toContain('worker 1/2: complete, and the split job is finalized');
    expect(listFiles(job.out).filter((f) => f.startsWith('_shards') || f.startsWith('_workers'))).toEqual([]);
    await expectExactOutput(job.out, expected);
  });
});
