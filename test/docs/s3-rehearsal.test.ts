import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fencedBlocks } from './fenced-blocks.js';

/**
 * The S3 rehearsal of docs/object-storage.md keeps its bucket in a folder its own steps create,
 * never a fixed one that another user, an earlier rehearsal or anything else may already hold.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FILE = 'docs/object-storage.md';
const PAGE = readFileSync(join(ROOT, FILE), 'utf8');

describe("docs/object-storage.md's S3 rehearsal", () => {
  const steps = fencedBlocks(PAGE, FILE).find((block) => block.lang === 'sh' && block.text.includes('s3rver'));

  it('gives s3rver a folder the steps made with mktemp -d', () => {
    expect(steps, 'the shell block that starts s3rver').toBeDefined();
    const text = steps?.text ?? '';
    const folder = /s3rver\S*\s.*\s-d\s+"?\$(\w+)"?\s/.exec(text)?.[1];
    expect(folder, "s3rver's -d is a variable").toBeDefined();
    const made = new RegExp(`^${folder}=\\$\\(mktemp -d\\)`, 'm');
    expect(text, `${folder} is made by mktemp -d before s3rver starts`).toMatch(made);
    expect(text.search(made)).toBeLessThan(text.indexOf('s3rver'));
  });

  it('names no fixed folder under /tmp, in its steps or its prose', () => {
    expect(PAGE.match(/\/tmp\/s3rver\S*/g) ?? []).toEqual([]);
    expect(steps?.text.match(/\/tmp\/\S*/g) ?? []).toEqual([]);
  });
});
