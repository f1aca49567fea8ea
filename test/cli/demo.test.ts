import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { describeExit, listFiles, runCliWith, snapshot, tempDir } from '../support/resume-harness.js';

/**
 * `npm start` (bulk-extract demo) never deletes data it did not write, and runs from any working
 * directory. Every run here is a small demo in a fresh temp folder that has no config/ of its own.
 */
const CONFIG = fileURLToPath(new URL('../../config/', import.meta.url));
const SMALL = ['--assets', '200', '--events', '2000', '--timeseries', '100', '--files', '100', '--sequences', '50', '--relationships', '300', '--log-level', 'warn'];

function demo(cwd: string, args: string[] = []) {
  return runCliWith(['demo', ...SMALL, ...args], { cwd });
}

describe.concurrent('bulk-extract demo', () => {
  it('works from any working directory, into ./demo-out, which it marks as its own; a second demo replaces it', async () => {
    const cwd = tempDir('demo-cwd');
    const first = await demo(cwd);
    expect(first.code, describeExit(first)).toBe(0);
    const files = listFiles(join(cwd, 'demo-out'));
    expect(files).toContain('_DEMO');
    expect(files).toContain('_SUCCESS');
    expect(first.stdout).toContain('read_parquet(\'./demo-out/events/*/*.parquet\')');
    expect(readdirSync(cwd)).toEqual(['demo-out']);

    const again = await demo(cwd);
    expect(again.code, describeExit(again)).toBe(0);
    expect(listFiles(join(cwd, 'demo-out'))).toContain('_SUCCESS');
  });

  it('refuses a folder that holds anything it did not write (exit 2, naming it and --out), and leaves it as it was', async () => {
    const cwd = tempDir('demo-refuse');
    const mine = join(cwd, 'demo-out');
    mkdirSync(join(mine, 'events'), { recursive: true });
    writeFileSync(join(mine, '_checkpoint.json'), '{"a user\'s": "export"}\n');
    writeFileSync(join(mine, 'events', 'keep-me.parquet'), 'data of the user');
    const before = snapshot(mine);
    const exit = await demo(cwd);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain(`demo: ${mine} holds files the demo did not write`);
    expect(exit.stderr).toContain('--out DIR');
    expect(exit.stderr).not.toMatch(/^\s+at /m);
    expect(snapshot(mine)).toEqual(before);
  });

  it('a folder it marked once, where files of the user joined its own, and its marker is now a link: the user\'s files and the link\'s target stay', async () => {
    const cwd = tempDir('demo-marked');
    const first = await demo(cwd);
    expect(first.code, describeExit(first)).toBe(0);
    const out = join(cwd, 'demo-out');
    const victim = join(cwd, 'victim.txt');
    writeFileSync(victim, 'the user\'s data\n');
    rmSync(join(out, '_DEMO'));
    symlinkSync(victim, join(out, '_DEMO'));
    writeFileSync(join(out, 'events', 'notes.txt'), 'mine\n');
    const again = await demo(cwd);
    expect(again.code, describeExit(again)).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('the user\'s data\n');
    expect(readFileSync(join(out, 'events', 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(again.stderr).toContain('that bulk-extract did not write');
  });

  it('takes an empty folder given with --out', async () => {
    const cwd = tempDir('demo-empty');
    mkdirSync(join(cwd, 'empty'));
    const exit = await demo(cwd, ['--out', 'empty']);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(listFiles(join(cwd, 'empty'))).toContain('_SUCCESS');
  });

  it('the README\'s sequence: a user\'s export in ./out (the example jobs\' folder) survives the demo', async () => {
    const cwd = tempDir('demo-sequence');
    // What a real job left in ./out: here, a copy of a demo's output without the marker.
    const made = await demo(cwd, ['--out', 'made']);
    expect(made.code, describeExit(made)).toBe(0);
    cpSync(join(cwd, 'made'), join(cwd, 'out'), { recursive: true, filter: (path) => !path.endsWith('_DEMO') });
    const before = snapshot(join(cwd, 'out'));
    const exit = await demo(cwd);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(snapshot(join(cwd, 'out'))).toEqual(before);
    // Every example job writes somewhere else than the demo.
    const demoDir = (parse(readFileSync(join(CONFIG, 'demo.yaml'), 'utf8')) as { output: { dir: string } }).output.dir;
    for (const name of readdirSync(CONFIG).filter((n) => /\.ya?ml$/.test(n) && n !== 'demo.yaml')) {
      const dir = (parse(readFileSync(join(CONFIG, name), 'utf8')) as { output?: { dir?: string } }).output?.dir ?? './out';
      expect(dir, `config/${name} output.dir`).not.toBe(demoDir);
    }
    expect(existsSync(join(cwd, 'demo-out', '_DEMO'))).toBe(true);
  });
});
