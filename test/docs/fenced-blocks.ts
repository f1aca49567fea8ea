import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A fenced code block of a Markdown file. */
export interface FencedBlock {
  /** `README.md:123`: the file, relative to the repository, and the line of the opening fence. */
  where: string;
  /** The info string's first word, lower case (`yaml`, `json`, `sh`); '' when there is none. */
  lang: string;
  /** The lines between the fences, without the opening fence's indentation. */
  text: string;
}

/** Any indentation: a fence inside a list item is indented as deep as the item. */
const OPENING = /^( *)(`{3,}|~{3,})\s*([^\s`]*)/;

/** Every fenced block of a Markdown text, in order; an unclosed block runs to the end (as in CommonMark). */
export function fencedBlocks(markdown: string, file: string): FencedBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPENING.exec(lines[i] ?? '');
    if (open === null) continue;
    const [, indent = '', fence = '', info = ''] = open;
    const closing = new RegExp(`^ *${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !closing.test(lines[j] ?? ''); j++) {
      const line = lines[j] ?? '';
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.replace(/^ +/, ''));
    }
    blocks.push({ where: `${file}:${i + 1}`, lang: info.toLowerCase(), text: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** README.md, every *.md under docs/ (when there is one) and under deploy/, relative to `root`. */
export function markdownFiles(root: string): string[] {
  const under = (dir: string): string[] => {
    if (!existsSync(join(root, dir))) return [];
    const names = readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' });
    return names.filter((name) => name.endsWith('.md')).map((name) => join(dir, name)).sort();
  };
  return ['README.md', ...under('docs'), ...under('deploy')];
}

/** The fenced blocks of every documentation file. */
export function documentationBlocks(root: string): FencedBlock[] {
  return markdownFiles(root).flatMap((file) => fencedBlocks(readFileSync(join(root, file), 'utf8'), file));
}
