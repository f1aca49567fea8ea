import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchors, slug } from './markdown-headings.js';

/**
 * Every relative link of README.md, CONTRIBUTING.md, docs/ and deploy/ points to a file or folder
 * of the repository, and a link with `#anchor` to a heading of that file (or of its own file).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(dir, name));
}

const FILES = ['README.md', 'CONTRIBUTING.md', ...markdownUnder('docs'), ...markdownUnder('deploy')].sort();

/** The link targets of a Markdown text, outside fenced blocks and code spans. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^ *(`{3,}|~{3,})[^\n]*\n[\s\S]*?^ *\1\s*$/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1] ?? '');
}

/** What is wrong with one link of `file`, or undefined when it leads somewhere. */
function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [path = '', anchor] = target.split('#', 2);
  const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
  if (resolved.startsWith('..')) return `${target}: outside the repository`;
  if (!existsSync(join(ROOT, resolved))) return `${target}: ${resolved} does not exist`;
  if (anchor === undefined) return undefined;
  if (statSync(join(ROOT, resolved)).isDirectory() || !resolved.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`;
  return anchors(readFileSync(join(ROOT, resolved), 'utf8')).has(anchor) ? undefined : `${target}: ${resolved} has no heading #${anchor}`;
}

describe('relative links of the documentation', () => {
  it('are checked in README.md, CONTRIBUTING.md and docs/; README.md links every page of docs/', () => {
    expect(FILES).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/commands.md']));
    const fromReadme = new Set(linkTargets(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((target) => target.split('#')[0]));
    expect(FILES.filter((file) => file.startsWith('docs/') && !fromReadme.has(file))).toEqual([]);
  });

  it.each(FILES)('%s: every relative link and anchor leads somewhere', (file) => {
    const targets = linkTargets(readFileSync(join(ROOT, file), 'utf8'));
    expect(targets.map((target) => brokenLink(file, target)).filter((problem) => problem !== undefined)).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('slug: as GitHub makes anchors', () => {
    expect(slug('`run --json`: one result per run')).toBe('run---json-one-result-per-run');
    expect(slug('Scale-out: a job split among workers, and Kubernetes')).toBe('scale-out-a-job-split-among-workers-and-kubernetes');
    expect(slug('`bulk-extract simulate`')).toBe('bulk-extract-simulate');
  });

  it('anchors: headings in fenced blocks are none, repeated ones are numbered', () => {
    expect(anchors('# A\n```sh\n# not a heading\n```\n## A\n## B')).toEqual(new Set(['a', 'a-1', 'b']));
  });

  it('linkTargets: links in prose, not in code', () => {
    const markdown = 'See [a](docs/a.md) and [`b`](#b).\n```sh\necho "[x](y.md)"\n```\n`[z](z.md)` ![i](i.png "title")';
    expect(linkTargets(markdown)).toEqual(['docs/a.md', '#b', 'i.png']);
  });

  it('brokenLink: a missing file, a missing anchor, a URL is not checked', () => {
    expect(brokenLink('docs/commands.md', 'nope.md')).toBe('nope.md: docs/nope.md does not exist');
    expect(brokenLink('README.md', 'docs/commands.md#nope')).toBe('docs/commands.md#nope: docs/commands.md has no heading #nope');
    expect(brokenLink('README.md', 'https://example.com/x')).toBeUndefined();
    expect(brokenLink('README.md', 'docs/commands.md#bulk-extract-run')).toBeUndefined();
  });
});
