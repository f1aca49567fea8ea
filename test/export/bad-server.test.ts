import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseCheckpoint } from '../../src/export/state/checkpoint.js';
import { runJob } from '../../src/export/run/run-job.js';
import { loadConfig } from '../../src/config/load-config.js';
import { silentLogger } from '../../src/log.js';
import { startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { send } from '../support/http.js';
import { inspectCrashState, sha256 } from '../support/resume-harness.js';
import { type ScriptedResponse, startScriptedServer } from '../support/scripted-server.js';

const KEY = 'bad-server-key-0001';
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

type Page = { items: Record<string, unknown>[]; nextCursor?: string };

/**
 * The platform's answers pass through `transform` (with the request number, from 1): undefined keeps
 * a page as it is. The export must stop the partition with the expected error code, keep every
 * committed shard intact and the checkpoint valid, and write no file from the bad answer.
 */
async function exportThrough(transform: (page: Page, n: number) => ScriptedResponse | undefined) {
  const sim = await startSimulator({ events: 1000, seed: 4, apiKeys: [KEY] });
  let count = 0;
  const proxy = await startScriptedServer(async (request) => {
    const path = request.url.replace('/api/v1/projects/scripted', '');
    if (request.method === 'POST') {
      // The run's count request goes through as it is: the pages are what this test breaks.
      const headers = { 'api-key': KEY, 'content-type': 'application/json' };
      const count = await send(`${sim.baseUrl}${path}`, { method: 'POST', headers, body: request.body });
      return { status: count.status, body: count.text };
    }
    const reply = await send(`${sim.baseUrl}${path}`, { headers: { 'api-key': KEY } });
    return transform(reply.json<Page>(), ++count) ?? { status: reply.status, body: reply.text };
  });
  const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-bad-server-'));
  cleanup.push(() => sim.close(), () => proxy.close(), () => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'out');
  writeFileSync(
    join(dir, 'job.yaml'),
    stringify({
      source: { baseUrl: proxy.baseUrl, auth: { type: 'api-key', apiKey: '${K}' }, retry: { maxAttempts: 2 } },
      streams: [{ resource: 'events', partitions: 1, limit: 100 }],
      output: { dir: out, formats: ['parquet', 'ndjson'], shard: { maxRows: 100 }, parquet: { rowGroupRows: 1000 } },
    }),
  );
  const result = await runJob({
    config: loadConfig(join(dir, 'job.yaml'), { K: KEY }),
    logger: silentLogger,
    clock: createFakeClock(),
  });
  return { result, out };
}

async function expectStoppedCleanly(out: string, result: Awaited<ReturnType<typeof runJob>>, code: string) {
  expect(result.state).toBe('failed');
  expect(result.errors.map((e) => (e.error as { code?: string }).code)).toEqual([code]);
  const checkpoint = parseCheckpoint(readFileSync(join(out, '_checkpoint.json'), 'utf8'), 'checkpoint');
  const part = checkpoint.streams.events?.parts['1'];
  // The page before the bad answer was committed; nothing after it.
  expect(part).toMatchObject({ done: false, nextSeq: 1, rows: 100 });
  const state = await inspectCrashState(out);
  expect(state.inprogress).toEqual([]);
  expect(state.unlisted).toEqual([]);
  expect(state.manifest?.files.map((f) => f.path).sort()).toEqual([
    'events/part=1-of-1/000000.ndjson',
    'events/part=1-of-1/000000.parquet',
  ]);
  for (const file of state.manifest?.files ?? []) expect(sha256(join(out, file.path))).toBe(file.sha256);
}

describe('bad answers from the platform: the partition stops with a clear error; nothing committed is harmed', () => {
  it.each<[string, string, (page: Page) => ScriptedResponse]>([
    ['an HTML error page (after retries)', 'E_HTTP_STATUS', () => ({ status: 502, headers: { 'content-type': 'text/html' }, body: '<html><title>502 Bad Gateway</title></html>' })],
    ['JSON of the wrong shape', 'E_BAD_RESPONSE', () => ({ body: { data: [] } })],
    ['items that are not an array', 'E_BAD_RESPONSE', (page) => ({ body: { ...page, items: {} } })],
    ['a wrong field type in an item', 'E_BAD_ITEM', (page) => ({ body: { ...page, items: page.items.map((item, i) => (i === 7 ? { ...item, startTime: '2024-01-01' } : item)) } })],
    ['a page with 100x the limit', 'E_BAD_RESPONSE', (page) => ({ body: { ...page, items: Array.from({ length: 100 }, () => page.items).flat() } })],
    ['a 200 with an empty body (after retries)', 'E_INVALID_JSON', () => ({ body: '' })],
    ['a redirect', 'E_BAD_RESPONSE', () => ({ status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' }, body: '' })],
    ['a nextCursor that is not a string', 'E_BAD_RESPONSE', (page) => ({ body: { ...page, nextCursor: 42 } })],
  ])('%s: %s', async (_, code, bad) => {
    // From the second request on, so that retrying cannot get past it.
    const { result, out } = await exportThrough((page, n) => (n >= 2 ? bad(page) : undefined));
    await expectStoppedCleanly(out, result, code);
  });

  it('a cursor loop (page 2 hands back page 1\'s cursor): E_CURSOR_LOOP', async () => {
    let firstCursor: string | undefined;
    const { result, out } = await exportThrough((page, n) => {
      if (n === 1) firstCursor = page.nextCursor;
      return n === 2 ? { body: { ...page, nextCursor: firstCursor } } : undefined;
    });
    await expectStoppedCleanly(out, result, 'E_CURSOR_LOOP');
  });
});
