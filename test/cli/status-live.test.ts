import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { send } from '../support/http.js';
import { describeExit, runCliWith, spawnCli } from '../support/resume-harness.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

const KEY = 'status-live-key-0001';
let sim: Simulator;
let proxy: ScriptedServer;
let dir: string;
let out: string;
let job: string;
/** While closed, every request for a page after the first waits: each partition has read one page. */
let gate: Promise<void> = Promise.resolve();
let open = () => {};

function close(): void {
  gate = new Promise((resolve) => {
    open = resolve;
  });
}

beforeAll(async () => {
  sim = await startSimulator({ events: 1000, apiKeys: [KEY] });
  proxy = await startScriptedServer(async (request) => {
    const path = request.url.replace('/api/v1/projects/scripted', '');
    if (path.includes('cursor=')) await gate;
    const method = request.method === 'POST' ? 'POST' : 'GET';
    const body = method === 'POST' ? { body: request.body } : {};
    const headers = { 'api-key': KEY, 'content-type': 'application/json' };
    try {
      const reply = await send(`${sim.baseUrl}${path}`, { method, headers, ...body });
      return { status: reply.status, body: reply.text };
    } catch {
      // A request of the killed run let through after the simulator closed: nobody reads the answer.
      return { status: 502, body: '' };
    }
  });
  dir = mkdtempSync(join(tmpdir(), 'bulk-extract-status-live-'));
  out = join(dir, 'out');
  job = join(dir, 'job.yaml');
  writeFileSync(
    job,
    stringify({
      source: { baseUrl: proxy.baseUrl, auth: { type: 'api-key', apiKey: '${K}' } },
      streams: [{ resource: 'events', partitions: 2, limit: 100 }],
      output: { dir: out, formats: ['parquet'] },
    }),
  );
});

afterAll(async () => {
  open();
  await proxy.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Part {
  partition: string;
  rows: number;
  done: boolean;
  live?: string;
  rowsRead?: number;
}

interface Stream {
  running?: { rows: number; total?: number; rowsPerSecond?: number };
}

async function status(): Promise<{ state: string; parts: Part[]; streams: Stream[]; text: string }> {
  const json = await runCliWith(['status', '--out', out, '--json', '--runs', '0']);
  expect(json.code, describeExit(json)).toBe(0);
  const text = await runCliWith(['status', '--out', out, '--runs', '0']);
  return { ...(JSON.parse(json.stdout) as { state: string; parts: Part[]; streams: Stream[] }), text: text.stdout };
}

/** Waits (polling the file, up to a minute) until the running run's progress file shows `rows` in each partition. */
async function progressShows(rows: number): Promise<void> {
  const file = join(out, '.progress.json');
  for (let tries = 0; tries < 600; tries++) {
    if (existsSync(file)) {
      const parts = Object.values((JSON.parse(readFileSync(file, 'utf8')) as { parts: Record<string, { rows: number }> }).parts);
      if (parts.length === 2 && parts.every((part) => part.rows === rows)) return;
    }
    await wait(100);
  }
  throw new Error(`the progress file never showed ${rows} rows in each partition`);
}

describe('status during a run', () => {
  it('shows each partition fetching with the rows read so far; stopped once its run is killed; the file gone at the end', async () => {
    close();
    const first = spawnCli(['run', '--config', job], { env: { K: KEY } });
    await progressShows(100);
    const running = await status();
    expect(running.state).toBe('running');
    for (const part of running.parts) expect(part).toMatchObject({ rows: 0, done: false, live: 'fetching', rowsRead: 100 });
    expect(running.text).toMatch(/events\s+1\/2\s+100 rows\s+0 shards\s+fetching \(0 of these committed\)/);
    expect(running.text).not.toContain('not started');
    // The stream as the run's progress line shows it: rows of the platform's count.
    expect(running.text).toMatch(/^ {2}events: full, .*; now 200\/1,000 20%/m);
    expect(running.streams[0]?.running).toMatchObject({ rows: 200, total: 1000 });

    first.child.kill('SIGKILL');
    await first.done;
    const killed = await status();
    expect(killed.state).toBe('stopped');
    for (const part of killed.parts) {
      expect(part.live).toBe('stopped');
      expect(part.rowsRead).toBeUndefined();
    }
    expect(killed.text).toMatch(/events\s+2\/2\s+0 rows\s+0 shards\s+stopped: the run fetching it is gone/);
    expect(killed.streams[0]?.running, 'a stopped run\'s figures are not shown').toBeUndefined();

    open();
    const second = await runCliWith(['run', '--config', job], { env: { K: KEY } });
    expect(second.code, describeExit(second)).toBe(0);
    expect(existsSync(join(out, '.progress.json'))).toBe(false);
    const complete = await status();
    expect(complete.state).toBe('complete');
    for (const part of complete.parts) {
      expect(part).toMatchObject({ rows: 500, done: true });
      expect(part.live).toBeUndefined();
    }
  }, 120_000);
});
