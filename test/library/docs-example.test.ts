import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { verifyOutput } from '../../src/export/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { fencedBlocks } from '../docs/fenced-blocks.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

/**
 * The example of docs/library.md, run as a user's program would run it: its own file, in a folder
 * of its own whose node_modules holds bulk-extract (this clone, built: `npm run build` first), with
 * nothing else installed beside it. It imports no logger, so it must run silently and still export
 * and verify the job. OAuth, so that no deprecation warning of an api key is at stake.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = readFileSync(join(ROOT, 'docs/library.md'), 'utf8');
const CLIENT = { id: 'library-example-client', secret: 'library-example-secret-0001' };

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ events: 2500, assets: 700, seed: 41, clients: [CLIENT] });
});

afterAll(async () => {
  await sim.close();
  removeTempDirs();
});

/** The page's first example that imports the package. */
function example(): string {
  const block = fencedBlocks(PAGE, 'docs/library.md').find((b) => b.lang === 'ts' && b.text.includes("from 'bulk-extract'"));
  if (block === undefined) throw new Error("docs/library.md has no ts block importing from 'bulk-extract'");
  return block.text;
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe("docs/library.md's example", () => {
  it('imports nothing but bulk-extract and node: modules', () => {
    const imported = [...example().matchAll(/from '([^']+)'/g)].map((match) => match[1] ?? '');
    expect(imported.filter((name) => name !== 'bulk-extract' && !name.startsWith('node:'))).toEqual([]);
  });

  it('runs as a program of its own without a logger: silent, the export complete and verified', { timeout: 120_000 }, async () => {
    expect(existsSync(join(ROOT, 'dist/index.js')), 'npm run build first').toBe(true);
    const dir = tempDir('bulk-extract-library-example-');
    mkdirSync(join(dir, 'node_modules'));
    // As `npm install /path/to/clone` installs it: a link to the clone.
    symlinkSync(ROOT, join(dir, 'node_modules', 'bulk-extract'), 'dir');
    const out = join(dir, 'out');
    const job = {
      source: {
        baseUrl: sim.baseUrl,
        auth: { type: 'oauth-client-credentials', tokenUrl: sim.tokenUrl, clientId: CLIENT.id, clientSecret: '${EXAMPLE_SECRET}' },
        retry: { baseDelayMs: 1, maxDelayMs: 5 },
      },
      streams: [{ resource: 'events', partitions: 2 }, { resource: 'assets' }],
      output: { dir: out, formats: ['ndjson'] },
    };
    writeFileSync(join(dir, 'job.yaml'), stringify(job));
    // Plain JavaScript as it stands; the .mts name lets Node strip types should it gain some.
    writeFileSync(join(dir, 'example.mts'), example());
    const env = { PATH: process.env.PATH, HOME: dir, EXAMPLE_SECRET: CLIENT.secret };
    const exit = await run('example.mts', dir, env);
    expect(exit, 'exit 0, and nothing printed').toEqual({ code: 0, stdout: '', stderr: '' });
    const report = await verifyOutput(out);
    expect(report).toMatchObject({ success: true, problems: [] });
    expect(report.formats.ndjson?.rows).toBe(2500 + 700);
  });
});
