import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OutputError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore } from '../../src/output/local-store.js';
import { LinkInOutputError } from '../../src/util/real-folder.js';
import { tempDir } from '../support/resume-harness.js';
import { expectCreatedOnce } from '../support/store-helpers.js';

/**
 * createText of an output folder (src/output/local-store.ts, writeFileIfAbsent in
 * src/util/durable-file.ts): a temp file of the call's own, hard-linked to the key, so one racer
 * wins, the text is never seen in part, nothing is replaced and nothing is written through a link.
 */
function folder(): { dir: string; store: ReturnType<typeof createLocalStore> } {
  const dir = tempDir('local-create');
  return { dir, store: createLocalStore(dir, silentLogger) };
}

/** Every entry under `dir`, recursively, as paths relative to it. */
function entries(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

describe('createText of a folder', () => {
  it('creates only if absent, its folder too; false for a file already there, which is left as it was', async () => {
    const { dir, store } = folder();
    await expectCreatedOnce(store);
    expect(entries(dir)).toEqual([
      '_delta_log',
      join('_delta_log', '00000000000000000000.json'),
      join('_delta_log', '00000000000000000001.json'),
      join('_delta_log', '_last_checkpoint'),
    ]);
  });

  it('of 20 calls at once on one key, exactly one says true and the file holds its text whole; no temp file is left', async () => {
    const { dir, store } = folder();
    const key = '_delta_log/00000000000000000007.json';
    // Large enough that a file seen while being written would be short, and each caller's distinct.
    const texts = Array.from({ length: 20 }, (_, i) => `${JSON.stringify({ add: { path: `part-${i}` } })}\n`.repeat(4096));
    const answers = await Promise.all(texts.map((text) => store.createText(key, text)));
    expect(answers.filter(Boolean)).toHaveLength(1);
    expect(readFileSync(join(dir, '_delta_log', '00000000000000000007.json'), 'utf8')).toBe(texts[answers.indexOf(true)]);
    expect(entries(dir)).toEqual(['_delta_log', join('_delta_log', '00000000000000000007.json')]);
  });

  it('refuses a symbolic link at the key (LinkInOutputError): its target is not written, the link stays', async () => {
    const { dir, store } = folder();
    const outside = tempDir('local-create-outside');
    const target = join(outside, 'victim.json');
    writeFileSync(target, 'not ours');
    mkdirSync(join(dir, '_delta_log'));
    const link = join(dir, '_delta_log', '00000000000000000000.json');
    symlinkSync(target, link);
    const attempt = store.createText('_delta_log/00000000000000000000.json', '{"commitInfo":{}}\n');
    await expect(attempt).rejects.toBeInstanceOf(LinkInOutputError);
    await expect(attempt).rejects.toThrow(`${link} is a symbolic link (to ${target})`);
    expect(readFileSync(target, 'utf8')).toBe('not ours');
    expect(readlinkSync(link)).toBe(target);
    expect(entries(dir)).toEqual(['_delta_log', join('_delta_log', '00000000000000000000.json')]);
  });

  it('refuses a dangling link at the key without creating its target', async () => {
    const { dir, store } = folder();
    const target = join(tempDir('local-create-outside'), 'nothing-here.json');
    symlinkSync(target, join(dir, 'commit.json'));
    await expect(store.createText('commit.json', 'x')).rejects.toBeInstanceOf(LinkInOutputError);
    expect(existsSync(target)).toBe(false);
    expect(lstatSync(join(dir, 'commit.json')).isSymbolicLink()).toBe(true);
    expect(entries(dir)).toEqual(['commit.json']);
  });

  it('refuses a link among the folders on the way, writing nothing where it points', async () => {
    const { dir, store } = folder();
    const outside = tempDir('local-create-outside');
    symlinkSync(outside, join(dir, '_delta_log'));
    await expect(store.createText('_delta_log/00000000000000000000.json', 'x')).rejects.toBeInstanceOf(LinkInOutputError);
    expect(entries(outside)).toEqual([]);
  });

  it('refuses a folder at the key (OutputError) and leaves it', async () => {
    const { dir, store } = folder();
    mkdirSync(join(dir, 'commit.json'));
    await expect(store.createText('commit.json', 'x')).rejects.toThrow(OutputError);
    await expect(store.createText('commit.json', 'x')).rejects.toThrow('exists and is not a file');
    expect(entries(dir)).toEqual(['commit.json']);
  });
});
