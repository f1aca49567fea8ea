import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import {
  INSTANCES_COMMON_KEYS,
  instancesKeys,
  instancesProblems,
  MAX_SPLIT_BOUNDARIES,
} from '../../src/config/instances-schema.js';
import { streamSchema } from '../../src/config/job-schema.js';
import { describeZodIssues, formatPath } from '../../src/util/zod-issues.js';

/**
 * The stream as job-schema.ts will hold it once the lead adds it to the union: the keys a collection
 * stream has that INSTANCES_COMMON_KEYS names (taken from the events stream's schema, so that they
 * are job-schema's own), the instances keys, and instancesProblems as the job's superRefine runs it.
 */
const { name, limit, formats, table, mode, keep } = streamSchema.options[0].shape;
const common = { name, limit, formats, table, mode, keep };
const instancesStream = z.strictObject({ ...common, ...instancesKeys }).superRefine((stream, ctx) => {
  for (const { path, message } of instancesProblems(stream)) ctx.addIssue({ code: 'custom', path, message });
});

const VIEW = 'view: {space: cdf_cdm, externalId: CogniteAsset, version: v1}';

/** A stream written as YAML (`resource: instances` and the view added), parsed. */
function load(yaml: string, view = VIEW): z.output<typeof instancesStream> {
  return instancesStream.parse(parse(`resource: instances\n${view}\n${yaml}`));
}

/** The problems of a stream written as YAML, one line each as the job file's messages show them. */
function problems(yaml: string, view = VIEW): string[] {
  const input: unknown = parse(`resource: instances\n${view}\n${yaml}`);
  const result = instancesStream.safeParse(input);
  if (result.success) throw new Error(`expected problems with ${yaml}`);
  return describeZodIssues(result.error, input).map((line) => `${formatPath(line.path)}: ${line.message}`);
}

describe('an instances stream: valid', () => {
  it("takes job-schema's common keys that INSTANCES_COMMON_KEYS names", () => {
    expect(streamSchema.options[0].shape.resource.value).toBe('assets');
    expect(Object.keys(common)).toEqual([...INSTANCES_COMMON_KEYS]);
  });

  it('defaults: nodes, every space, no filter, one query, pages of 1000, mode full', () => {
    expect(load('')).toEqual({
      resource: 'instances',
      view: { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' },
      instanceType: 'node',
      limit: 1000,
      mode: 'full',
      allowExpiredCursorsAndAcceptMissedDeletes: false,
    });
  });

  it('takes edges, spaces, a filter, a split by externalId and the common keys', () => {
    const stream = load(
      [
        'name: asset-edges',
        'instanceType: edge',
        'spaces: [site_a, site-b]',
        'filter: {prefix: {property: [edge, externalId], value: "rel:"}}',
        'split: {property: externalId, at: ["rel:g", "rel:p"]}',
        'limit: 500',
        'formats: [ndjson]',
        'mode: snapshot',
        'keep: 3',
      ].join('\n'),
      'view: {space: my_space, externalId: Flow_2, version: "2.0.1"}',
    );
    expect(stream).toMatchObject({
      name: 'asset-edges',
      instanceType: 'edge',
      spaces: ['site_a', 'site-b'],
      filter: { prefix: { property: ['edge', 'externalId'], value: 'rel:' } },
      split: { property: 'externalId', at: ['rel:g', 'rel:p'] },
      limit: 500,
      formats: ['ndjson'],
      mode: 'snapshot',
      keep: 3,
    });
  });

  it('takes split: space with two spaces or more, and a split by externalId, in every mode', () => {
    expect(load('spaces: [a, b]\nsplit: space').split).toBe('space');
    expect(load('split: {property: externalId, at: [g, "n", t]}').split).toEqual({ property: 'externalId', at: ['g', 'n', 't'] });
    expect(load('split: {property: externalId, at: ["\\uffff", "😀"]}').split).toEqual({ property: 'externalId', at: ['\uffff', '😀'] });
    expect(load('mode: incremental\nsplit: {property: externalId, at: [m]}').split).toEqual({ property: 'externalId', at: ['m'] });
    expect(load('mode: incremental').mode).toBe('incremental');
  });
});

describe('an instances stream: refused, each problem at its key', () => {
  it.each<[string, string, string[]?]>([
    ['', 'view: {space: cdf_cdm, externalId: CogniteAsset}', ['view.version: Invalid input: expected string, received undefined']],
    [
      '',
      'view: {space: 1cdm, externalId: CogniteAsset, version: v1}',
      ['view.space: expected a space: a letter, then at most 42 letters, digits, _ or - (got "1cdm")'],
    ],
    [
      '',
      'view: {space: cdf_cdm, externalId: Cognite-Asset, version: v1}',
      ['view.externalId: expected an externalId: a letter, then at most 254 letters, digits or _, not ending in _ (got "Cognite-Asset")'],
    ],
    [
      '',
      'view: {space: cdf_cdm, externalId: CogniteAsset, version: v1, versoin: v2}',
      ['view: Unrecognized key: "versoin"'],
    ],
    ['', 'view: {space: system, externalId: CogniteAsset, version: v1}', ["view.space: 'system' is a reserved name, not a space that can exist (got \"system\")"]],
    ['instanceType: nodes', VIEW, ['instanceType: Invalid option: expected one of "node"|"edge" (got "nodes")']],
    ['spaces: []', VIEW, ['spaces: give at least one space, or leave spaces out (got a list)']],
    ['spaces: [a, b, a]', VIEW, ['spaces.2: a is listed twice (got "a")']],
    ['spaces: [a, node]', VIEW, ["spaces.1: 'node' is a reserved name, not a space that can exist (got \"node\")"]],
    ['split: spaces', VIEW, ['split: expected space or {property: externalId, at: [b1, b2, ...]} (got "spaces")']],
    ['split: space', VIEW, ['split: a split by space makes one query per entry of spaces; list at least 2 spaces (got "space")']],
    ['spaces: [a]\nsplit: space', VIEW, ['split: a split by space makes one query per entry of spaces; list at least 2 spaces (got "space")']],
    [
      'split: {property: externalId, at: [b, a]}',
      VIEW,
      ['split.at.1: the boundaries increase strictly (by code point): "a" does not come after "b" (got "a")'],
    ],
    [
      'split: {property: externalId, at: ["😀", "\\uffff"]}',
      VIEW,
      ['split.at.1: the boundaries increase strictly (by code point): "\uffff" does not come after "😀" (got "\uffff")'],
    ],
    ['split: {property: externalId, at: [a, a]}', VIEW, ['split.at.1: the boundaries increase strictly (by code point): "a" does not come after "a" (got "a")']],
    ['split: {property: externalId, at: [1, b]}', VIEW, ['split.at.0: externalId takes strings: write the boundary in quotes (got 1)']],
    ['split: {property: externalId, at: [a, [b]]}', VIEW, ['split.at.1: externalId takes strings: write the boundary in quotes (got a list)']],
    ['split: {property: externalId, at: []}', VIEW, ['split.at: give at least one boundary (got a list)']],
    [
      `split: {property: externalId, at: [${Array.from({ length: MAX_SPLIT_BOUNDARIES + 1 }, (_, i) => `k${String(i).padStart(2, '0')}`).join(', ')}]}`,
      VIEW,
      ['split.at: at most 19 boundaries (20 ranges) (got a list)'],
    ],
    [
      'split: {property: criticality, at: [2, 4]}',
      VIEW,
      [
        "split.property: criticality is a property of the view, which may change while a run reads: an instance whose value moves from one query's range to another's would be read twice or not at all; " +
        'split by what never changes: split: {property: externalId, at: [...]}, or split: space with spaces (got "criticality")',
      ],
    ],
    [
      'split: {property: lastUpdatedTime, at: ["2024-01-01T00:00:00Z"]}',
      VIEW,
      [
        'split.property: lastUpdatedTime is a field of the instance that changes whenever the instance does; ' +
        'split by what never changes: split: {property: externalId, at: [...]}, or split: space with spaces (got "lastUpdatedTime")',
      ],
    ],
    [
      'split: {property: createdTime, at: ["a"]}',
      VIEW,
      [
        'split.property: createdTime is not a field a split ranges over; ' +
        'split by what never changes: split: {property: externalId, at: [...]}, or split: space with spaces (got "createdTime")',
      ],
    ],
    [
      'split: {property: space, at: [m]}',
      VIEW,
      ['split.property: a split by space is written split: space (one query per entry of spaces) (got "space")'],
    ],
    [
      'split: {property: my-prop, at: [a]}',
      VIEW,
      [
        'split.property: expected externalId; expected a property identifier: a letter, ' +
        'then at most 254 letters, digits or _, not ending in _ (got "my-prop")',
      ],
    ],
    ['split: {property: externalId, at: [a], by: range}', VIEW, ['split: Unrecognized key: "by"']],
    ['keep: 2', VIEW, ["keep: keep applies to mode: snapshot (completed snapshots to keep); this stream's mode is full (got 2)"]],
    [
      'instanceType: edge\nfilter: {and: [{equals: {property: [node, space], value: a}}]}',
      VIEW,
      ['filter.and.0.equals.property.0: this stream lists edges: ["edge", "space"] (got "node")'],
    ],
    ['filter: {range: {property: [node, version]}}', VIEW, ['filter.range: give at least one of gt, gte, lt, lte (got a mapping)']],
    ['limit: 1001', VIEW, ['limit: Too big: expected number to be <=1000 (got 1001)']],
    ['partitions: 4', VIEW, ['(root): Unrecognized key: "partitions"']],
    ['metadataColumns: [a]', VIEW, ['(root): Unrecognized key: "metadataColumns"']],
    ['safetyLag: 5m', VIEW, ['(root): Unrecognized key: "safetyLag"']],
  ])('%s %s', (yaml, view, expected) => {
    expect(problems(yaml, view)).toEqual(expected);
  });
});
