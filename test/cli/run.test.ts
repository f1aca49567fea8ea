import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator, SimulatorOptions } from '../../src/simulator/index.js';
import {
  createGatedClock,
  describeExit,
  type Exit,
  expectedIds,
  expectExactOutput,
  type ExpectedStream,
  inspectCrashState,
  type JobSpec,
  listFiles,
  newSimulator,
  readCheckpoint,
  readManifest,
  runCliWith,
  spawnCli,
  type StreamSpec,
  tempDir,
  type Job,
  newJob as newHarnessJob,
} from '../support/resume-harness.js';
import { closedPort } from '../support/closed-port.js';
import { issueToken } from '../support/simulator-auth.js';
import { expectGaveUpWithin } from '../support/retry-waits.js';

/**
 * `bulk-extract run`: flags, exit codes, signals and what it prints. Every test has its own
 * simulator (the tests run concurrently and count requests): events 12,000 in 4 partitions of 3
 * pages, shards of 2000 rows (2 per partition); assets 600 in 2 partitions of one page.
 */
const KEY = 'cli-run-api-key-0001';
const WRONG_KEY = 'cli-run-wrong-key-0002';
const CLIENT = { id: 'cli-run-client', secret: 'cli-run-client-secret-0003' };
const EVENTS = 12_000;
const ASSETS = 600;
const SEED = 5;

/** Every credential handed to the CLI in this file; none may appear in what it prints. */
const secrets = new Set([KEY, WRONG_KEY, CLIENT.secret]);
const outputs: string[] = [];

function expectNoSecrets(text: string): void {
  for (const secret of secrets) expect(text, `output contains a credential (${secret.slice(0, 6)}...)`).not.toContain(secret);
}

afterEach(() => {
  expectNoSecrets(outputs.join('\n'));
});

function simulator(options: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  return newSimulator({
    events: EVENTS,
    assets: ASSETS,
    seed: SEED,
    apiKeys: [KEY],
    clients: [CLIENT],
    recordRequests: true,
    ...options,
  });
}

const BOTH: StreamSpec[] = [
  { resource: 'events', partitions: 4, limit: 1000 },
  { resource: 'assets', partitions: 2, limit: 1000 },
];
const EVENTS_ONLY: StreamSpec[] = [{ resource: 'events', partitions: 4, limit: 1000 }];

function newJob(sim: Simulator, streams: StreamSpec[] = BOTH, extra: Partial<JobSpec> = {}): Job {
  return newHarnessJob(sim, streams, extra, 'cli-run');
}

async function run(job: Job, args: string[] = [], env: Record<string, string> = { SIM_KEY: KEY }): Promise<Exit> {
  const exit = await runCliWith(['run', '--config', job.file, ...args], { cwd: job.dir, env });
  outputs.push(exit.stdout, exit.stderr);
  expectNoSecrets(`${exit.stdout}\n${exit.stderr}`);
  return exit;
}

/** What each stream of the job must export, in `formats` (default: the job's). */
function expectedOf(job: Job, formats: JobSpec['formats'] = job.spec.formats): ExpectedStream[] {
  return job.spec.streams.map((stream) => ({
    name: stream.name ?? stream.resource,
    resource: stream.resource,
    partitions: stream.partitions ?? 10,
    formats: stream.formats ?? formats ?? ['parquet'],
    ids: expectedIds(job.sim, stream.resource, stream.filter),
  }));
}

function listRequests(sim: Simulator, from = 0) {
  return sim
    .requests()
    .slice(from)
    .filter((r) => r.route === 'GET /events' || r.route === 'GET /assets');
}

/** The plan's output with the pinned maxLastUpdatedTime (the time of the dry run) as PIN. */
function pinned(stdout: string): string {
  return stdout.replace(/maxLastUpdatedTime=\d{13}\b/g, 'maxLastUpdatedTime=PIN');
}

describe.concurrent('--dry-run', () => {
  it('checks the credential and the access a run needs, prints the plan and asks each stream for one item only', async () => {
    const streams: StreamSpec[] = [
      { resource: 'events', partitions: 4, limit: 1000, filter: { type: 'alarm', minStartTime: 1_600_000_000_000 } },
      { resource: 'assets', name: 'all-assets', partitions: 2, limit: 500 },
    ];
    const job = newJob(await simulator(), streams);
    const exit = await run(job, ['--dry-run']);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stdout).toMatch(/^credential {2}api-key, user .*: works \(GET \/login\/status: logged in\)$/m);
    expect(exit.stdout).toContain(`output      ${job.out}\n`);
    expect(exit.stdout).toContain(`checkpoint  ${join(job.out, '_checkpoint.json')}\n`);
    // A full export pins maxLastUpdatedTime at the run's start (the filter's order: after type).
    const events = 'GET /events?limit=1000&type=alarm&maxLastUpdatedTime=PIN&minStartTime=1600000000000';
    expect(pinned(exit.stdout)).toContain(`stream events: ${events} in 4 partition(s) -> parquet + ndjson, full\n`);
    expect(pinned(exit.stdout)).toContain(
      'stream all-assets: GET /assets?limit=500&maxLastUpdatedTime=PIN in 2 partition(s) -> parquet + ndjson, full\n',
    );
    expect(exit.stdout).toContain('6 cursor chains; at most 8 requests in flight and 64 MiB of responses held.');

    // The credential, one count per collection as a run's first request (a 403 or 404 there would refuse
    // it), and each stream's first request for one item (a 400 there would refuse it).
    const routes = job.sim.requests().map((r) => r.route);
    expect(routes.sort()).toEqual([
      'GET /assets', 'GET /events', 'GET /login/status', 'POST /assets/aggregate', 'POST /events/aggregate',
    ]);
    expect(listRequests(job.sim).every((r) => r.params.some(([key, value]) => key === 'limit' && value === '1'))).toBe(true);
    expect(existsSync(job.out), 'a dry run creates no output folder').toBe(false);
  });

  it('with a token: the credential check (GET /assets?limit=1) and one item a stream are the only list requests', async () => {
    const sim = await simulator();
    const token = await issueToken(sim, CLIENT);
    secrets.add(token);
    const job = newJob(sim, BOTH, { auth: { type: 'token', token: '${SIM_TOKEN}' } });
    const exit = await run(job, ['--dry-run'], { SIM_TOKEN: token });
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stdout).toMatch(
      /^credential {2}token, .*: works \(GET \/api\/v1\/projects\/demo\/assets\?limit=1 answered 200/m,
    );
    const asked = listRequests(sim).map((r) => [r.route, r.params.filter(([key]) => key === 'limit'), r.status]);
    expect(asked.sort()).toEqual([
      ['GET /assets', [['limit', '1']], 200], ['GET /assets', [['limit', '1']], 200], ['GET /events', [['limit', '1']], 200],
    ]);
  });

  it('--concurrency and --formats show in the plan', async () => {
    const job = newJob(await simulator());
    const exit = await run(job, ['--dry-run', '--concurrency', '3', '--formats', 'ndjson']);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stdout).toContain('at most 3 requests in flight and 32 MiB of responses held.');
    expect(exit.stdout).toContain('in 4 partition(s) -> ndjson, full\n');
  });

  it('with a wrong key exits 3 and says so', async () => {
    const job = newJob(await simulator());
    const exit = await run(job, ['--dry-run'], { SIM_KEY: WRONG_KEY });
    expect(exit.code, describeExit(exit)).toBe(3);
    expect(exit.stdout).toContain('REFUSED');
    expect(listRequests(job.sim)).toEqual([]);
  });
});

describe('--dry-run with nothing listening, default retry policy (one at a time: they time themselves)', () => {
  it('at source.baseUrl: exit 1 within 5 s, naming the URL and source.baseUrl', async () => {
    const sim = await simulator();
    // After the simulator: a port just closed may be the next one handed out.
    const port = await closedPort();
    const job = newJob(sim, BOTH, { baseUrl: `http://127.0.0.1:${port}/api/v1/projects/demo`, defaultRetry: true });
    const started = performance.now();
    const exit = await run(job, ['--dry-run']);
    expectGaveUpWithin(exit.stderr, 5000, performance.now() - started);
    expect(exit.code, describeExit(exit)).toBe(1);
    expect(exit.stderr).toContain(
      `bulk-extract run: Cannot reach http://127.0.0.1:${port}/login/status: connection refused (ECONNREFUSED), nothing listens there. Check source.baseUrl (`,
    );
    expect(existsSync(job.out)).toBe(false);
  });

  it('at source.auth.tokenUrl: exit 1 within 5 s, naming the token URL and its key; the platform hears nothing', async () => {
    const sim = await simulator();
    const port = await closedPort();
    const job = newJob(sim, BOTH, {
      auth: {
        type: 'oauth-client-credentials',
        tokenUrl: `http://127.0.0.1:${port}/oauth2/token`,
        clientId: CLIENT.id,
        clientSecret: '${SIM_SECRET}',
      },
      defaultRetry: true,
    });
    const started = performance.now();
    const exit = await run(job, ['--dry-run'], { SIM_SECRET: CLIENT.secret });
    expectGaveUpWithin(exit.stderr, 5000, performance.now() - started);
    expect(exit.code, describeExit(exit)).toBe(1);
    expect(exit.stderr).toContain(
      `bulk-extract run: Cannot reach http://127.0.0.1:${port}/oauth2/token: connection refused (ECONNREFUSED), nothing listens there. Check source.auth.tokenUrl (`,
    );
    expect(sim.requests()).toEqual([]);
  });
});

describe.concurrent('exit codes and errors', () => {
  it('a run with a wrong key exits 3 and writes no shard', async () => {
    const job = newJob(await simulator());
    const exit = await run(job, [], { SIM_KEY: WRONG_KEY });
    expect(exit.code, describeExit(exit)).toBe(3);
    expect(exit.stderr).toMatch(/401|Unauthorized/);
    const files = listFiles(job.out);
    expect(files.filter((f) => f.includes('/part='))).toEqual([]);
    expect(files).not.toContain('_SUCCESS');
    expect(files).not.toContain('.lock');
  });

  it('a job with no streams exits 2 naming streams', async () => {
    const job = newJob(await simulator(), []);
    const exit = await run(job);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toMatch(/streams: the job has no streams/);
  });

  it('an unknown --stream exits 2 naming the streams of the job', async () => {
    const job = newJob(await simulator());
    const exit = await run(job, ['--stream', 'nope']);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain('--stream nope: no such stream; the job has events, assets');
  });

  it('an output folder that cannot be created (under a regular file) exits 2 naming output.dir', async () => {
    const dir = tempDir('cli-run-unwritable');
    const blocker = join(dir, 'not-a-folder');
    writeFileSync(blocker, 'a file');
    const job = newJob(await simulator(), BOTH, { outDir: join(blocker, 'out') });
    const exit = await run(job);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toMatch(/output\.dir: cannot create .*not-a-folder\/out \(ENOTDIR\)/);
    expect(listRequests(job.sim)).toEqual([]);
  });

  it('a bad --concurrency value exits 2', async () => {
    const job = newJob(await simulator());
    const exit = await run(job, ['--concurrency', 'many']);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain('--concurrency expects an integer');
  });
});

describe.concurrent('overrides, streams and the summary', () => {
  it('--out and --formats take effect; the summary lists each stream\'s rows', async () => {
    const job = newJob(await simulator());
    const elsewhere = join(job.dir, 'elsewhere');
    const exit = await run(job, ['--out', elsewhere, '--formats', 'ndjson']);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(existsSync(job.out), 'output.dir of the file was not used').toBe(false);
    await expectExactOutput(elsewhere, expectedOf(job, ['ndjson']));
    expect(listFiles(elsewhere).filter((f) => f.endsWith('.parquet'))).toEqual([]);
    expect(exit.stderr).toMatch(/^bulk-extract: complete in /m);
    expect(exit.stderr).toMatch(/^ {2}events +12,000 rows +8 files .* done$/m);
    expect(exit.stderr).toMatch(/^ {2}assets +600 rows +2 files .* done$/m);
    // No credential at rest either.
    for (const file of listFiles(elsewhere)) {
      expect(readFileSync(join(elsewhere, file)).includes(KEY), `${file} holds the key`).toBe(false);
    }
  });

  it('--stream NAME runs only that stream; _SUCCESS appears once every stream of the job is done', async () => {
    const job = newJob(await simulator());
    const assets = await run(job, ['--stream', 'assets']);
    expect(assets.code, describeExit(assets)).toBe(0);
    const first = listRequests(job.sim);
    expect(first.length).toBeGreaterThan(0);
    expect(first.every((r) => r.route === 'GET /assets')).toBe(true);
    expect(listFiles(job.out).filter((f) => f.startsWith('events/'))).toEqual([]);
    expect(existsSync(join(job.out, '_SUCCESS')), 'no _SUCCESS while events is not exported').toBe(false);
    expect(readCheckpoint(job.out).streams.assets?.parts['1']?.done).toBe(true);
    expect(assets.stderr).toMatch(/^ {2}assets +600 rows .* done$/m);

    const from = job.sim.requests().length;
    const events = await run(job, ['--stream', 'events']);
    expect(events.code, describeExit(events)).toBe(0);
    expect(listRequests(job.sim, from).every((r) => r.route === 'GET /events')).toBe(true);
    expect(readManifest(job.out).state).toBe('complete');
    await expectExactOutput(job.out, expectedOf(job));
  });

  it('"rows/s this run" counts this run\'s rows: a run with nothing left to do claims no rate, and says so once', async () => {
    const job = newJob(await simulator(), [{ resource: 'assets', partitions: 2, limit: 1000 }]);
    const first = await run(job);
    expect(first.code, describeExit(first)).toBe(0);
    expect(first.stderr).toMatch(/^ {2}assets +600 rows +4 files .* done$/m);

    const from = job.sim.requests().length;
    const again = await run(job);
    expect(again.code, describeExit(again)).toBe(0);
    expect(listRequests(job.sim, from)).toEqual([]);
    expect(again.stderr).toMatch(/^bulk-extract: nothing to do; the output was not changed\.$/m);
    expect(again.stderr.match(/nothing to do/g)).toHaveLength(1);
    // Every stream line still shows the whole output...
    expect(again.stderr).toMatch(/^ {2}assets +600 rows +4 files .* done$/m);
    // ...but this run exported nothing, and claims no rate of its own.
    expect(again.stderr).not.toMatch(/rows\/s this run/);
  });
});

describe.concurrent('with requests held in flight (a gated simulator clock)', () => {
  async function gatedJob(passFirst: number, extra: Partial<JobSpec> = {}) {
    const clock = createGatedClock(passFirst);
    const job = newJob(await simulator({ faults: { latencyMs: 1 }, clock }), EVENTS_ONLY, extra);
    return { clock, job };
  }

  it('SIGINT with requests in flight: commits the pages it took, exits 130 with a valid checkpoint; the next run completes exactly', async () => {
    // The 4 first pages go through (one per chain); every chain's second request is held.
    const { clock, job } = await gatedJob(4);
    const cli = spawnCli(['run', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    await clock.whenHeld(4);
    cli.child.kill('SIGINT');
    // The held requests are never answered: the run must stop without them.
    const exit = await cli.done;
    outputs.push(exit.stdout, exit.stderr);
    expectNoSecrets(`${exit.stdout}\n${exit.stderr}`);
    expect(clock.held).toBe(4);
    expect(exit.code, describeExit(exit)).toBe(130);
    expect(exit.stderr).toContain('"signal":"SIGINT"');
    expect(exit.stderr).toContain('stopping: committing what is complete');
    expect(exit.stderr).toMatch(/^bulk-extract: interrupted in /m);
    expect(existsSync(join(job.out, '_SUCCESS'))).toBe(false);

    const state = await inspectCrashState(job.out);
    expect(state.inprogress, 'open shards were committed or dropped').toEqual([]);
    expect(state.unlisted).toEqual([]);
    expect(state.pastCheckpoint).toEqual([]);
    expect(state.manifest?.state).toBe('interrupted');
    const parts = Object.values(state.checkpoint?.streams.events?.parts ?? {});
    expect(parts).toHaveLength(4);
    expect(parts.some((p) => p.done)).toBe(false);
    // Every page the run received (the 4 let through) is in a committed shard; the held ones are not.
    expect(parts.map((p) => p.rows)).toEqual([1000, 1000, 1000, 1000]);

    clock.open();
    const resumed = await run(job);
    expect(resumed.code, describeExit(resumed)).toBe(0);
    expect(resumed.stderr).toContain('"resumed":true');
    await expectExactOutput(job.out, expectedOf(job));
  });

  it('a second SIGINT exits at once (130); the next run still completes exactly', async () => {
    const { clock, job } = await gatedJob(4);
    const cli = spawnCli(['run', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    await clock.whenHeld(4);
    cli.child.kill('SIGINT');
    await cli.waitForStderr(/stopping: committing what is complete/);
    cli.child.kill('SIGINT');
    const exit = await cli.done;
    outputs.push(exit.stdout, exit.stderr);
    expect(exit.code, describeExit(exit)).toBe(130);
    expect(exit.stderr).toContain('second signal: exiting now');

    const state = await inspectCrashState(job.out);
    expect(state.checkpoint).toBeDefined();
    clock.open();
    const resumed = await run(job);
    expect(resumed.code, describeExit(resumed)).toBe(0);
    await expectExactOutput(job.out, expectedOf(job));
  });

  it('--concurrency overrides source.concurrency (requests in flight at the simulator)', async () => {
    // The file's concurrency (8) lets all 4 chains ask at once: hold requests until 4 are waiting.
    // The stream's first page goes alone (the memory budget learns its size), so let it through.
    const { clock, job } = await gatedJob(1, { concurrency: 8, formats: ['ndjson'] });
    const wide = spawnCli(['run', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    await clock.whenHeld(4);
    clock.open();
    const wideExit = await wide.done;
    outputs.push(wideExit.stderr);
    expect(wideExit.code, describeExit(wideExit)).toBe(0);
    expect(job.sim.stats().maxInFlight).toBeGreaterThanOrEqual(4);

    // With --concurrency 1 one request at a time reaches the simulator, though 4 chains want more.
    const narrowDir = join(job.dir, 'narrow');
    job.sim.resetStats();
    const narrow = await run(job, ['--concurrency', '1', '--out', narrowDir]);
    expect(narrow.code, describeExit(narrow)).toBe(0);
    expect(job.sim.stats().maxInFlight).toBe(1);
    expect(job.sim.stats().pages).toBe(EVENTS / 1000);
    await expectExactOutput(narrowDir, expectedOf(job));
  });
});
