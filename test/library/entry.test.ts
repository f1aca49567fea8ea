import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import * as library from '../../src/index.js';
import { silentLogger } from '../../src/log.js';
import { fencedBlocks } from '../docs/fenced-blocks.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * The package's entry (src/index.ts, `import ... from 'bulk-extract'`) does what docs/library.md
 * says: a run, its status, a dry run and a verify through it alone, against the simulator.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = readFileSync(join(ROOT, 'docs/library.md'), 'utf8');

let sim: library.Simulator;

beforeAll(async () => {
  sim = await library.startSimulator({ events: 4000, assets: 1500, seed: 3, apiKeys: [SIM_KEY] });
});

afterAll(async () => {
  await sim.close();
});

afterEach(removeTempDirs);

function job() {
  const dir = tempDir('bulk-extract-library-');
  const out = join(dir, 'out');
  const config = loadJob(dir, {
    baseUrl: sim.baseUrl,
    out,
    streams: [{ resource: 'events', partitions: 3 }, { resource: 'assets' }],
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
  });
  return { config, out };
}

describe('the library entry', () => {
  it('runs, inspects, reports status and verifies an export as docs/library.md shows', async () => {
    const { config, out } = job();
    const now = new Date().toISOString();
    const run = { only: undefined, fresh: false, repair: false };
    const before = await library.inspectRun(config, run, silentLogger, now);
    expect(before.streams.map((stream) => stream.action.kind)).toEqual(['start', 'start']);
    expect(await library.readStatus(library.outputAt(out, silentLogger))).toBeUndefined();

    const result = await library.runJob({ config, logger: silentLogger, clock: createFakeClock() });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
    expect(result.rows).toBe(4000 + 1500);

    const status = await library.readStatus(await library.openOutput(config, silentLogger));
    expect(status?.state).toBe('complete');
    const rowsOf = (name: string) =>
      (status?.parts ?? [])
        .filter((part) => part.stream === name && part.done)
        .reduce((sum, part) => sum + part.rows, 0);
    expect(status?.streams.map((stream) => stream.stream)).toEqual(['events', 'assets']);
    expect([rowsOf('events'), rowsOf('assets')]).toEqual([4000, 1500]);

    const report = await library.verifyJob(config, silentLogger);
    expect(report).toMatchObject({ success: true, problems: [] });
    expect(report.formats.parquet?.rows).toBe(5500);
  });

  it('takes no logger: each function that logs runs without one, and prints nothing', async () => {
    const { config, out } = job();
    const written: string[] = [];
    const spies = [process.stdout, process.stderr].map((stream) =>
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0),
    );
    try {
      const before = await library.inspectRun(config);
      expect(before.streams.map((stream) => stream.action.kind)).toEqual(['start', 'start']);
      const result = await library.runJob({ config, clock: createFakeClock() });
      expect(result).toMatchObject({ state: 'complete', errors: [], rows: 4000 + 1500 });
      expect((await library.readStatus(await library.openOutput(config)))?.state).toBe('complete');
      expect((await library.readStatus(library.outputAt(out)))?.state).toBe('complete');
      expect(await library.verifyJob(config)).toMatchObject({ success: true, problems: [] });
      expect(await library.finalizeJob(config)).toEqual({ state: 'none' });
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(written).toEqual([]);
  });

  it('refuses a second runJob on an output a run of the same process is writing', async () => {
    const { config } = job();
    const first = library.runJob({ config, logger: silentLogger, clock: createFakeClock() });
    const second = library.runJob({ config, logger: silentLogger, clock: createFakeClock() });
    const [one, two] = await Promise.allSettled([first, second]);
    const outcomes = [one, two].map((outcome) => outcome.status);
    expect(outcomes.sort()).toEqual(['fulfilled', 'rejected']);
    const refused = [one, two].find((outcome) => outcome.status === 'rejected');
    expect(refused?.reason).toBeInstanceOf(library.LockedError);
    expect(String(refused?.reason)).toContain('in use by another bulk-extract run');
  });
});

describe('docs/library.md', () => {
  const source = readFileSync(join(ROOT, 'src/index.ts'), 'utf8');
  const exported = new Set([...source.matchAll(/^\s*(?:type\s+)?([A-Za-z]\w*),?$/gm)].map((match) => match[1]));
  for (const match of source.matchAll(/export (?:type )?\{([^}]*)\}/g)) {
    for (const name of (match[1] ?? '').split(',')) exported.add(name.replace(/^\s*type\s+/, '').trim());
  }

  it("imports only what the package's entry exports", () => {
    const imported = fencedBlocks(PAGE, 'docs/library.md')
      .filter((block) => block.lang === 'ts')
      .flatMap((block) => [...block.text.matchAll(/import \{([^}]*)\} from 'bulk-extract'/g)])
      .flatMap((match) => (match[1] ?? '').split(',').map((name) => name.trim()));
    expect(imported.length).toBeGreaterThan(0);
    expect(imported.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('names in its table of functions and errors only what the entry exports', () => {
    const named = [...PAGE.matchAll(/`([A-Za-z]\w*)(?:\(|`)/g)].map((match) => match[1] ?? '');
    // Functions (camelCase with a capital inside) and error classes.
    const api = named.filter((name) => /^[a-z]+[A-Z]|Error$/.test(name));
    expect(api).toContain('finalizeJob');
    expect(api.filter((name) => !exported.has(name))).toEqual([]);
    for (const name of api) expect(typeof (library as Record<string, unknown>)[name], name).toBe('function');
  });
});
