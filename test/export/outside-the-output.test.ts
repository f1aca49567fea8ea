import { cpSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import {
  describeExit,
  type Exit,
  expectedIds,
  type ExpectedStream,
  expectExactOutput,
  finishedExport,
  type JobSpec,
  listFiles,
  newSimulator,
  readCheckpoint,
  runCliWith,
  type StreamSpec,
  tempDir,
  writeJob,
} from '../support/resume-harness.js';

/**
 * bulk-extract never touches anything outside its output: no write or delete goes through a
 * symbolic link inside the output folder, and no cleanup deletes a file it did not write. Every
 * case runs the real CLI against a victim folder beside the output and checks the victim is as it
 * was, byte for byte.
 */
const KEY = 'outside-key-0001';
const STREAMS: StreamSpec[] = [{ resource: 'events', partitions: 2, limit: 500 }];

let sim: Simulator;
/** A finished export that cases copy. */
let finished: string;

beforeAll(async () => {
  sim = await newSimulator({ events: 3000, seed: 47, apiKeys: [KEY] });
  finished = await finishedExport(sim, KEY, spec, 'outside-template');
});

function spec(outDir: string, extra: Partial<JobSpec> = {}): JobSpec {
  return { baseUrl: sim.baseUrl, outDir, streams: STREAMS, formats: ['parquet', 'ndjson'], maxRows: 1000, ...extra };
}

function run(file: string, cwd: string, args: string[] = []): Promise<Exit> {
  return runCliWith(['run', '--config', file, ...args], { cwd, env: { SIM_KEY: KEY } });
}

interface Case {
  dir: string;
  out: string;
  file: string;
  /** A folder outside the output, with a file of the user's in it. */
  victim: string;
}

function newCase(copyFinished: boolean): Case {
  const dir = tempDir('outside');
  const out = join(dir, 'out');
  if (copyFinished) cpSync(finished, out, { recursive: true });
  const victim = join(dir, 'victim');
  mkdirSync(victim);
  writeFileSync(join(victim, 'precious.txt'), 'the user\'s data\n');
  return { dir, out, file: writeJob(join(dir, 'job.yaml'), spec(out)), victim };
}

function expectVictimUntouched(c: Case): void {
  expect(listFiles(c.victim)).toEqual(['precious.txt']);
  expect(readFileSync(join(c.victim, 'precious.txt'), 'utf8')).toBe('the user\'s data\n');
}

const exact = (): ExpectedStream[] => [
  { name: 'events', resource: 'events', partitions: 2, formats: ['parquet', 'ndjson'], ids: expectedIds(sim, 'events') },
];

describe.concurrent('no write or delete goes through a link inside the output folder', () => {
  it('a link at the checkpoint\'s temporary name: the run writes a new file, the link\'s target is unchanged', async () => {
    const c = newCase(false);
    mkdirSync(c.out);
    symlinkSync(join(c.victim, 'precious.txt'), join(c.out, '_checkpoint.json.inprogress'));
    const exit = await run(c.file, c.dir);
    expect(exit.code, describeExit(exit)).toBe(0);
    expectVictimUntouched(c);
    expect(readCheckpoint(c.out).streams.events?.parts['1']?.done).toBe(true);
    await expectExactOutput(c.out, exact());
  });

  it('a link at a shard\'s temporary name: the shard is written as a new file beside it', async () => {
    const c = newCase(false);
    mkdirSync(join(c.out, 'events', 'part=1-of-2'), { recursive: true });
    symlinkSync(join(c.victim, 'precious.txt'), join(c.out, 'events', 'part=1-of-2', '000000.ndjson.inprogress'));
    const exit = await run(c.file, c.dir);
    expect(exit.code, describeExit(exit)).toBe(0);
    expectVictimUntouched(c);
    await expectExactOutput(c.out, exact());
  });

  it('a run records folder that is a link: the record is not written through it, and the run\'s outcome stands', async () => {
    const c = newCase(false);
    mkdirSync(c.out);
    symlinkSync(c.victim, join(c.out, '_runs'));
    const exit = await run(c.file, c.dir);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stderr).toContain('the run\'s record was not written to _runs/');
    expect(exit.stderr).toContain(`${join(c.out, '_runs')} is a symbolic link (to ${c.victim})`);
    expectVictimUntouched(c);
    await expectExactOutput(c.out, exact());
  });

  it.each([
    ['a partition folder', 'events/part=1-of-2'],
    ['a stream folder', 'events'],
  ])('%s that is a link: refused before anything is written, exit 2, naming the link', async (_, link) => {
    const c = newCase(false);
    mkdirSync(join(c.out, link, '..'), { recursive: true });
    symlinkSync(c.victim, join(c.out, link));
    const exit = await run(c.file, c.dir);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain(`${join(c.out, link)} is a symbolic link (to ${c.victim})`);
    expectVictimUntouched(c);
    // Nothing but the link itself: a first run that is refused records nothing either.
    expect(listFiles(c.out)).toEqual([link]);
  });

  it('--fresh on an export whose stream folder became a link: refused, nothing deleted behind it', async () => {
    const c = newCase(true);
    cpSync(join(c.out, 'events'), join(c.victim, 'events-copy'), { recursive: true });
    const before = listFiles(c.victim);
    // The stream folder now points at the victim's copy of it: a cleanup that followed it would empty it.
    cpSync(join(c.out, 'events'), join(c.dir, 'moved-events'), { recursive: true });
    rmSync(join(c.out, 'events'), { recursive: true });
    symlinkSync(join(c.victim, 'events-copy'), join(c.out, 'events'));
    const exit = await run(c.file, c.dir, ['--fresh']);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain('is a symbolic link');
    expect(listFiles(c.victim)).toEqual(before);
    expect(readlinkSync(join(c.out, 'events'))).toBe(join(c.victim, 'events-copy'));
  });

  it('the output folder itself may be a link (a volume mounted elsewhere): the export lands behind it', async () => {
    const c = newCase(false);
    const real = join(c.dir, 'real-out');
    mkdirSync(real);
    symlinkSync(real, c.out);
    const exit = await run(c.file, c.dir);
    expect(exit.code, describeExit(exit)).toBe(0);
    await expectExactOutput(real, exact());
    expectVictimUntouched(c);
  });
});

describe.concurrent('cleanups delete only what bulk-extract wrote', () => {
  const foreign = ['events/notes.txt', 'events/part=1-of-2/mine.csv', 'events/part=2-of-2/000099.csv'];

  function addForeign(out: string): void {
    for (const key of foreign) {
      mkdirSync(join(out, key, '..'), { recursive: true });
      writeFileSync(join(out, key), `${key}\n`);
    }
  }

  /** The user's files are there as they were, a warning named them; then they go, and the export must be exact. */
  async function expectForeignKept(c: Case, exit: Exit): Promise<void> {
    for (const key of foreign) expect(readFileSync(join(c.out, key), 'utf8'), key).toBe(`${key}\n`);
    expect(exit.stderr).toMatch(/left \d file\(s\) in .* that bulk-extract did not write/);
    for (const key of foreign) rmSync(join(c.out, key));
    await expectExactOutput(c.out, exact());
  }

  it('a first run into a folder that already holds files of the user in the stream\'s folders keeps them', async () => {
    const c = newCase(false);
    addForeign(c.out);
    const exit = await run(c.file, c.dir);
    expect(exit.code, describeExit(exit)).toBe(0);
    await expectForeignKept(c, exit);
  });

  it('--fresh deletes the export\'s shards and keeps every other file', async () => {
    const c = newCase(true);
    addForeign(c.out);
    const exit = await run(c.file, c.dir, ['--fresh']);
    expect(exit.code, describeExit(exit)).toBe(0);
    await expectForeignKept(c, exit);
  });

  it('a resume keeps a file of the user\'s in a partition folder, even one named like a temporary file', async () => {
    const c = newCase(false);
    const killed = await runCliWith(['run', '--config', c.file], {
      cwd: c.dir,
      env: { SIM_KEY: KEY, BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:3' },
    });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const mine = ['events/part=1-of-2/notes.inprogress', 'events/part=2-of-2/draft.parquet'];
    for (const key of mine) {
      mkdirSync(join(c.out, key, '..'), { recursive: true });
      writeFileSync(join(c.out, key), 'mine\n');
    }
    const exit = await run(c.file, c.dir);
    expect(exit.code, describeExit(exit)).toBe(0);
    for (const key of mine) expect(readFileSync(join(c.out, key), 'utf8'), key).toBe('mine\n');
    for (const key of mine) rmSync(join(c.out, key));
    await expectExactOutput(c.out, exact());
  });
});
