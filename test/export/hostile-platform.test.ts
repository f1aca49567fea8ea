import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { READ_LIMIT_SLACK } from '../../src/export/partition/read-limit.js';
import { MAX_JSON_DEPTH } from '../../src/util/json-limits.js';
import { describeExit, readCheckpoint, readManifest, runCliWith, tempDir } from '../support/resume-harness.js';
import { type ScriptedRequest, type ScriptedResponse, startScriptedServer } from '../support/scripted-server.js';

/**
 * A broken or hostile platform can fail a run, never make it write what it should not or run
 * forever: each case is a scripted server on loopback answering the real CLI as such a platform
 * would, and checks what the run says, its exit code and what it committed.
 */
const KEY = 'hostile-key-0001';
const servers: { close(): Promise<void> }[] = [];

afterAll(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Events 1..n as the platform sends them. */
function events(from: number, count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    id: from + i,
    startTime: 1_700_000_000_000,
    createdTime: 1_700_000_000_000,
    lastUpdatedTime: 1_700_000_000_000,
  }));
}

/** A platform whose count aggregate says `count`, and whose list pages `page(i, request)` gives. */
async function platform(count: number, page: (i: number, request: ScriptedRequest) => ScriptedResponse) {
  let pages = 0;
  const server = await startScriptedServer((request) => {
    if (request.url.endsWith('/events/aggregate')) return { body: { items: [{ count }] } };
    return page(pages++, request);
  });
  servers.push(server);
  return server;
}

/** Runs a one-stream job (events, one partition, pages of 1000, both formats) against `baseUrl`. */
async function runAgainst(baseUrl: string, extra: { maxRows?: number } = {}) {
  const dir = tempDir('hostile');
  const out = join(dir, 'out');
  const file = join(dir, 'job.yaml');
  const job = {
    source: { baseUrl, auth: { type: 'api-key', apiKey: '${K}' }, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } },
    streams: [{ resource: 'events', partitions: 1, limit: 1000 }],
    output: { dir: out, formats: ['parquet', 'ndjson'], shard: { maxRows: extra.maxRows ?? 1000 } },
  };
  writeFileSync(file, stringify(job));
  const exit = await runCliWith(['run', '--config', file, '--json'], { cwd: dir, env: { K: KEY } });
  return { dir, out, file, exit };
}

describe.concurrent('a platform that sends items again', () => {
  it('the same page under ever new cursors: the partition stops at its second coming (E_REPEATED_PAGE), the first stays', async () => {
    const server = await platform(5000, (i) => ({ body: { items: events(1, 1000), nextCursor: `fresh-${i}` } }));
    const { out, exit } = await runAgainst(server.baseUrl);
    expect(exit.code, describeExit(exit)).toBe(1);
    expect(JSON.parse(exit.stdout)).toMatchObject({ state: 'failed', errors: [{ code: 'E_REPEATED_PAGE', stream: 'events', partition: 1 }] });
    expect(exit.stderr).toContain('partition failed: events partition 1');
    expect(readCheckpoint(out).streams.events?.parts['1']).toMatchObject({ rows: 1000, done: false });
    expect(server.requests.filter((r) => r.url.includes('/events?'))).toHaveLength(2);
  });

  it('new pages that repeat what came before, without end: stopped past maxReadFactor x the count (E_READ_LIMIT), naming the partition', async () => {
    // Each page moves on by 10 items only: no two pages alike, and the chain never ends.
    const server = await platform(2000, (i) => ({ body: { items: events(1 + 10 * i, 1000), nextCursor: `c${i}` } }));
    const { out, exit } = await runAgainst(server.baseUrl);
    expect(exit.code, describeExit(exit)).toBe(1);
    expect(JSON.parse(exit.stdout)).toMatchObject({ errors: [{ code: 'E_READ_LIMIT', partition: 1 }] });
    expect(exit.stderr).toContain('events partition 1/1: the stream has read');
    expect(exit.stderr).toContain('more than 2 times the 2,000 items the platform counts in it');
    const limit = 2 * 2000 + READ_LIMIT_SLACK;
    const pages = server.requests.filter((r) => r.url.includes('/events?')).length;
    // The page past the limit, and at most the one fetched ahead of it.
    expect(pages).toBeGreaterThanOrEqual(Math.floor(limit / 1000) + 1);
    expect(pages).toBeLessThanOrEqual(Math.floor(limit / 1000) + 2);
    // What was committed before the stop stays: the pages up to the limit, never the one past it.
    const committed = readCheckpoint(out).streams.events?.parts['1']?.rows ?? 0;
    expect(committed).toBeLessThanOrEqual(limit);
    expect(committed).toBeGreaterThan(0);
  });

  it('a resumed chain whose first page is the last page committed, again: E_REPEATED_PAGE, no row twice', async () => {
    // Pages of 1000 events from no cursor, c1 and c2; the first run fails at c2 (a 400), having committed two.
    let run = 1;
    const server = await startScriptedServer((request) => {
      if (request.url.endsWith('/events/aggregate')) return { body: { items: [{ count: 3000 }] } };
      const cursor = new URL(request.url, 'http://x').searchParams.get('cursor');
      if (cursor === null) return { body: { items: events(1, 1000), nextCursor: 'c1' } };
      if (cursor === 'c1') return { body: { items: events(1001, 1000), nextCursor: 'c2' } };
      if (cursor === 'c3') return { body: { items: events(2001, 1000) } };
      // The second run asks from c2: the page before it comes again, under the next cursor.
      if (run === 1) return { status: 400, body: { error: { code: 400, message: 'not now' } } };
      return { body: { items: events(1001, 1000), nextCursor: 'c3' } };
    });
    servers.push(server);
    const first = await runAgainst(server.baseUrl);
    expect(first.exit.code, describeExit(first.exit)).toBe(1);
    expect(readCheckpoint(first.out).streams.events?.parts['1']).toMatchObject({ rows: 2000, cursor: 'c2' });
    run = 2;
    const second = await runCliWith(['run', '--config', first.file, '--json'], { cwd: first.dir, env: { K: KEY } });
    expect(second.code, describeExit(second)).toBe(1);
    expect(JSON.parse(second.stdout)).toMatchObject({ errors: [{ code: 'E_REPEATED_PAGE', partition: 1 }] });
    expect(readCheckpoint(first.out).streams.events?.parts['1']).toMatchObject({ rows: 2000, cursor: 'c2' });
  });

  it('items repeated across pages of a chain that ends: the run cannot tell, verify names the repeated keys', async () => {
    // 3 pages of 1000, the second and third each starting with 10 items of the page before.
    const starts = [1, 991, 1981];
    const server = await platform(2970, (i) => ({
      body: { items: events(starts[i] ?? 1, 1000), ...(i < 2 ? { nextCursor: `c${i}` } : {}) },
    }));
    const { dir, out, file, exit } = await runAgainst(server.baseUrl);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stderr).toContain('keys not checked: run with --verify (or bulk-extract verify)');
    expect(JSON.parse(exit.stdout)).toMatchObject({ verified: null });
    expect(readManifest(out).streams.events?.rows).toBe(3000);
    // run --verify reads it back at its end (here a run with nothing left to do) and fails on them.
    const checked = await runCliWith(['run', '--config', file, '--verify', '--json'], { cwd: dir, env: { K: KEY } });
    expect(checked.code, describeExit(checked)).toBe(1);
    expect(checked.stderr).toContain('verify FAILED: 1 problem(s); 3,000 keys checked');
    expect(JSON.parse(checked.stdout)).toMatchObject({ exitCode: 1, verified: { keysChecked: 3000, problems: [expect.stringContaining('20 row(s) repeat the id')] } });
    const verify = await runCliWith(['verify', out], { cwd: dir });
    expect(verify.code, describeExit(verify)).toBe(1);
    expect(verify.stdout).toContain('FAILED: 1 problem(s)');
    expect(verify.stdout).toContain('events: 20 row(s) repeat the id of an earlier row (id 991 2 times, id 992 2 times, id 993 2 times)');
    const report = JSON.parse((await runCliWith(['verify', out, '--json'], { cwd: dir })).stdout) as { keysChecked: number };
    expect(report.keysChecked).toBe(3000);
  });
});

describe.concurrent('an item nested without end', () => {
  it(`an item nesting the page deeper than ${MAX_JSON_DEPTH} levels: E_BAD_RESPONSE naming it, no stack overflow, the pages before it committed`, async () => {
    const depth = 100_000;
    const server = await platform(3000, (i) =>
      i === 0
        ? { body: { items: events(1, 1000), nextCursor: 'c0' } }
        : { body: `{"items":[{"id":5000,"x":${'['.repeat(depth)}${']'.repeat(depth)}}],"nextCursor":"c${i}"}` },
    );
    const { out, exit } = await runAgainst(server.baseUrl);
    expect(exit.code, describeExit(exit)).toBe(1);
    expect(exit.stderr).not.toContain('Maximum call stack size exceeded');
    expect(JSON.parse(exit.stdout)).toMatchObject({ errors: [{ code: 'E_BAD_RESPONSE', partition: 1 }] });
    expect(exit.stderr).toContain(`The answer is nested deeper than ${MAX_JSON_DEPTH} levels at items[0] (id 5000).x[0][0][0][0][0][0][0]… (257 levels)`);
    expect(readCheckpoint(out).streams.events?.parts['1']?.rows).toBe(1000);
  });
});
