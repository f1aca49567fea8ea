import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fencedBlocks } from './fenced-blocks.js';
import { headings } from './markdown-headings.js';

/**
 * docs/commands.md shows, under a heading `bulk-extract <command>` for every command (and
 * `bulk-extract` for the top level), a ```text block that is exactly what `<command> --help`
 * prints. The commands are those src/cli/main.ts dispatches, so a new command without docs fails.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = 'docs/commands.md';

/** The commands `main` dispatches: its `case 'name':` labels, less the flags and the `help` alias. */
function dispatchedCommands(source: string): string[] {
  const labels = [...source.matchAll(/case '([^']+)':/g)].map((match) => match[1] ?? '');
  return labels.filter((label) => /^[a-z]/.test(label) && label !== 'help');
}

/** The commands the top-level usage lists: the first word of each line under `Commands:`. */
function usageCommands(usage: string): string[] {
  const section = usage.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? '';
  return [...section.matchAll(/^ {2}([a-z][a-z-]*) {2,}/gm)].map((match) => match[1] ?? '');
}

/** Per `## \`bulk-extract ...\`` heading, the text of the first ```text block of its section. */
function helpBlocks(markdown: string): Map<string, string | undefined> {
  const blocks = fencedBlocks(markdown, DOC)
    .filter((block) => block.lang === 'text')
    .map((block) => ({ line: Number(block.where.slice(DOC.length + 1)), text: block.text }));
  const sections = headings(markdown).filter((heading) => heading.level <= 2);
  const result = new Map<string, string | undefined>();
  sections.forEach((heading, i) => {
    const name = /^`(bulk-extract(?: [a-z-]+)?)`$/.exec(heading.text)?.[1];
    if (name === undefined) return;
    const end = sections[i + 1]?.line ?? Number.POSITIVE_INFINITY;
    result.set(name, blocks.find((block) => block.line > heading.line && block.line < end)?.text);
  });
  return result;
}

const commands = dispatchedCommands(readFileSync(join(ROOT, 'src/cli/main.ts'), 'utf8'));
const documented = helpBlocks(readFileSync(join(ROOT, DOC), 'utf8'));
const invocations = [[], ...commands.map((command) => [command])];

describe(`${DOC} shows exactly what --help prints`, () => {
  it('for the commands main.ts dispatches, the same the top-level usage lists', async () => {
    expect(commands).toEqual(expect.arrayContaining(['run', 'repair', 'finalize', 'status', 'verify', 'auth', 'simulate', 'demo']));
    const { stdout } = await runCli(['--help']);
    expect(usageCommands(stdout).sort()).toEqual([...commands].sort());
  });

  it('and documents no command that does not exist', () => {
    const expected = invocations.map((args) => ['bulk-extract', ...args].join(' '));
    expect([...documented.keys()].sort()).toEqual(expected.sort());
  });

  it.each(invocations.map((args) => [['bulk-extract', ...args, '--help'].join(' '), args] as const))(
    '%s',
    async (_, args) => {
      const heading = ['bulk-extract', ...args].join(' ');
      const block = documented.get(heading);
      if (block === undefined) expect.fail(`${DOC} has no \`\`\`text block under a heading \`${heading}\``);
      const { code, stdout, stderr } = await runCli([...args, '--help']);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout.replace(/\n+$/, ''), `${DOC}, ${heading}: the block differs from what --help prints`).toBe(block);
    },
  );
});

describe('the checks themselves', () => {
  it('dispatchedCommands: case labels, less flags and help', () => {
    const source = "switch (c) { case 'run': case 'auth': case '--version': case '-v': case undefined: case 'help': }";
    expect(dispatchedCommands(source)).toEqual(['run', 'auth']);
  });

  it('usageCommands: the first word of each command line, not the continuation lines', () => {
    const usage = 'Usage: x\n\nCommands:\n  run        Export.\n             more text.\n  auth       Check.\n\nOptions:\n  --help, -h     Help.\n';
    expect(usageCommands(usage)).toEqual(['run', 'auth']);
  });

  it('helpBlocks: the first text block of each command section, none when a section has none', () => {
    const markdown = ['# C', '## `bulk-extract run`', '```sh', 'x', '```', '```text', 'Usage: run', '```', '## `bulk-extract auth`', 'no block', '## Other', '```text', 'y', '```'];
    expect(helpBlocks(markdown.join('\n'))).toEqual(new Map([['bulk-extract run', 'Usage: run'], ['bulk-extract auth', undefined]]));
  });
});
