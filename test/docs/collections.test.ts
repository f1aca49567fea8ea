import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type FilterSpec, RESOURCE_SPECS } from '../../src/resources/index.js';

/**
 * docs/collections.md describes each collection from its file in src/resources/: this holds the
 * page to the registry, so a filter or column added there and not here fails.
 */
const PAGE = readFileSync(new URL('../../docs/collections.md', import.meta.url), 'utf8');

/** The text of `## name` up to the next heading. */
function section(name: string): string {
  const start = PAGE.indexOf(`\n## ${name}\n`);
  if (start < 0) throw new Error(`docs/collections.md has no section ## ${name}`);
  const end = PAGE.indexOf('\n## ', start + 1);
  return PAGE.slice(start, end < 0 ? undefined : end);
}

/** The code spans of the bullet that starts with `label`, in order. */
function bulletSpans(text: string, label: string): string[] {
  const bullet = new RegExp(`^- \\*\\*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\*\\*([\\s\\S]*?)(?=^- |^$)`, 'm').exec(text);
  if (bullet === null) throw new Error(`no bullet **${label}**`);
  return [...(bullet[1] ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
}

describe.each(RESOURCE_SPECS.map((spec) => [spec.name, spec] as const))('docs/collections.md, ## %s', (name, spec) => {
  const text = section(name);
  const filters = spec.filters as readonly FilterSpec[];
  const keys = new Set(filters.map((filter) => filter.key));

  it('lists the filters GET takes, and those only POST takes, as the registry has them', () => {
    const mentioned = (label: string) => bulletSpans(text, label).filter((span) => keys.has(span));
    const onGet = filters.filter((filter) => filter.via !== 'body').map((filter) => filter.key);
    const byPost = filters.filter((filter) => filter.via === 'body').map((filter) => filter.key);
    expect(new Set(mentioned('Filters by GET:'))).toEqual(new Set(onGet));
    expect(new Set(mentioned('By POST only:'))).toEqual(new Set(byPost));
  });

  it('lists the Parquet columns in their order', () => {
    const names = spec.columns.map((column) => column.name);
    const listed = [...new Set(bulletSpans(text, 'Columns:').filter((span) => names.includes(span)))];
    expect(listed).toEqual(names);
  });

  it('names the key, which the table at the top agrees with', () => {
    expect(PAGE).toContain(`| [\`${name}\`](#${name}) |`);
    const row = PAGE.split('\n').find((line) => line.startsWith(`| [\`${name}\`]`)) ?? '';
    expect(row).toContain(`| \`${spec.key}\` |`);
    expect(row).toContain(spec.countable ? '| yes |' : '| no |');
  });
});
