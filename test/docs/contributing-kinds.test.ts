import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { streamKind } from '../../src/export/kinds/index.js';
import { streamRecord } from '../../src/export/state/stream-records.js';

/**
 * CONTRIBUTING.md's "Adding a stream kind" lists what a kind provides: the list must name every
 * member of the interfaces a kind implements (StreamKind, StreamRecord) and nothing else, and each
 * of the four kinds must provide every one of them.
 */

const guide = readFileSync(new URL('../../CONTRIBUTING.md', import.meta.url), 'utf8');
const section = guide.slice(guide.indexOf('### Adding a stream kind'), guide.indexOf('`test/deploy/` reads'));

/** The members of an interface, as its source declares them. */
function membersOf(file: string, name: string): string[] {
  const text = readFileSync(new URL(`../../src/${file}`, import.meta.url), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const found = source.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name,
  );
  if (found === undefined) throw new Error(`${file} declares no interface ${name}`);
  return found.members.flatMap((member) =>
    member.name !== undefined && ts.isIdentifier(member.name) ? [member.name.text] : [],
  );
}

/** The members the guide lists for StreamKind: its bullets `- \`name\`: ...` under item 3. */
function listedKindMembers(): string[] {
  const item = section.slice(section.indexOf('3. **Its `StreamKind`**'), section.indexOf('4. **Its record**'));
  return [...item.matchAll(/^ {3}- `(\w+)`:/gm)].map((match) => match[1] ?? '');
}

/** The members the guide lists for StreamRecord: the names in parentheses of item 4. */
function listedRecordMembers(): string[] {
  const item = section.slice(section.indexOf('4. **Its record**'), section.indexOf('5. **Its writers**'));
  const inParentheses = /\(([^)]*)\)/.exec(item)?.[1] ?? '';
  return [...inParentheses.matchAll(/`(\w+)`/g)].map((match) => match[1] ?? '');
}

describe("CONTRIBUTING.md's list of what a stream kind provides", () => {
  it('is found', () => {
    expect(section).toContain('StreamKind');
    expect(listedKindMembers().length).toBeGreaterThan(5);
    expect(listedRecordMembers().length).toBeGreaterThan(3);
  });

  it('names every member of StreamKind, in the order declared, and nothing else', () => {
    expect(listedKindMembers()).toEqual(membersOf('export/partition/stream-kind.ts', 'StreamKind'));
  });

  it('names every member of StreamRecord and nothing else', () => {
    expect(listedRecordMembers()).toEqual(membersOf('export/state/stream-records.ts', 'StreamRecord'));
  });

  it('holds for each of the four kinds: every member provided', () => {
    const kindMembers = membersOf('export/partition/stream-kind.ts', 'StreamKind');
    const recordMembers = membersOf('export/state/stream-records.ts', 'StreamRecord');
    const resources = ['events', 'datapoints', 'instances', 'datapoint-subscription'] as const;
    const kinds = resources.map((resource) => [streamKind(resource), streamRecord(resource)] as const);
    expect(new Set(kinds.map(([kind]) => kind)).size, 'four kinds, not one').toBe(4);
    for (const [kind, record] of kinds) {
      expect(kindMembers.filter((member) => !(member in kind))).toEqual([]);
      expect(recordMembers.filter((member) => !(member in record))).toEqual([]);
    }
  });
});
