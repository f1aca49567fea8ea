import { describe, expect, it } from 'vitest';
import { CheckpointError } from '../../src/errors.js';
import { type Checkpoint, commitPart, newCheckpoint, parseCheckpoint, type PointsPartState } from '../../src/export/state/checkpoint.js';
import { fieldColumns, type InstanceColumn } from '../../src/resources/index.js';
import { pointsStreamPlan, streamPlan } from '../support/streams.js';

/**
 * What bulk-extract never writes in a checkpoint, which its reader refuses whatever the digest
 * says: here in files of version 5, which carry no digest (an export begun by an earlier version),
 * so that only these rules stand between such a file and a resume that loses or repeats rows.
 */
const BASE = 'https://acme.example.com/api/v1/projects/acme';
const T0 = '2026-01-01T00:00:00.000Z';
const FILE = '/data/out/_checkpoint.json';

const POINTS = pointsStreamPlan();

/** The text of a version 5 checkpoint (no digest). */
function version5(checkpoint: Checkpoint): string {
  return JSON.stringify({ ...checkpoint, version: 5 }, null, 2);
}

/** A datapoints checkpoint whose partition 1 committed one shard of 10 rows, its points state as given. */
function pointsCheckpoint(
  given: Omit<PointsPartState, 'listedSeries'>,
  edit: (checkpoint: Checkpoint) => void = () => {},
): string {
  const points = { ...given, listedSeries: 0 };
  const checkpoint = commitPart(newCheckpoint(BASE, [POINTS], T0), 'points', 1, { cursor: undefined, rows: 10, shards: 1, points }, T0);
  edit(checkpoint);
  return version5(checkpoint);
}

function refusal(text: string): string {
  try {
    parseCheckpoint(text, FILE);
  } catch (error) {
    expect(error).toBeInstanceOf(CheckpointError);
    return (error as CheckpointError).message;
  }
  throw new Error('expected a CheckpointError');
}

const INFLIGHT = [{ id: 7, after: 1_000 }];

describe('a datapoints partition bulk-extract never writes is refused, naming the file and the entry', () => {
  const cases: [string, string, string][] = [
    [
      '`listed: false` with no listing cursor after rows were committed (a resume would list and read every series again)',
      pointsCheckpoint({ listing: null, listed: false, series: INFLIGHT, unknown: [] }),
      'streams.points.parts.1.points.listed: false with no listing cursor',
    ],
    [
      '`listed: false` with no cursor and no series in flight, rows committed',
      pointsCheckpoint({ listing: null, listed: false, series: [], unknown: [] }),
      'streams.points.parts.1.points.listed',
    ],
    [
      'a listing cursor saved after the listing ended',
      pointsCheckpoint({ listing: 'c2', listed: true, series: INFLIGHT, unknown: [] }),
      'streams.points.parts.1.points.listing',
    ],
    [
      '`done` with series in flight (their points would never be read)',
      pointsCheckpoint({ listing: null, listed: true, series: INFLIGHT, unknown: [] }, (c) => {
        c.streams.points!.parts['1']!.done = true;
      }),
      'streams.points.parts.1.done: true with 1 series in flight',
    ],
    [
      'one series in flight twice (its points would be read twice)',
      pointsCheckpoint({ listing: 'c2', listed: false, series: [{ id: 7, after: 1_000 }, { id: 7, after: null }], unknown: [] }),
      'streams.points.parts.1.points.series: the series of id 7 is in flight twice',
    ],
    [
      'rows committed without the state of its series',
      pointsCheckpoint({ listing: 'c2', listed: false, series: INFLIGHT, unknown: [] }, (c) => {
        delete c.streams.points!.parts['1']!.points;
      }),
      'streams.points.parts.1: 10 rows committed in 1 shard(s) without the state of its series',
    ],
  ];

  it.each(cases)('%s', (_, text, where) => {
    const message = refusal(text);
    expect(message).toContain(`${FILE} holds what bulk-extract never writes (${where}`);
    expect(message).toMatch(/Restore it as it was, or run with --fresh/);
    expect(message).not.toMatch(/bug|please report/);
  });

  it('what bulk-extract writes is taken: a listing going on, a listing ended, pieces of one series apart, a partition not begun', () => {
    const pieces = [{ id: 7, after: 1_000, start: 0, end: 5_000 }, { id: 7, after: null, start: 5_000, end: 9_000 }];
    for (const text of [
      pointsCheckpoint({ listing: 'c2', listed: false, series: INFLIGHT, unknown: [] }),
      pointsCheckpoint({ listing: null, listed: true, series: INFLIGHT, unknown: [{ id: 9 }] }),
      pointsCheckpoint({ listing: null, listed: true, series: [], unknown: [] }),
      pointsCheckpoint({ listing: null, listed: true, series: pieces, unknown: [] }),
      version5(newCheckpoint(BASE, [POINTS], T0)),
    ]) {
      expect(() => parseCheckpoint(text, FILE)).not.toThrow();
    }
  });
});

describe('an instances stream\'s columns bulk-extract never writes are refused', () => {
  const ASSETS = streamPlan({
    name: 'assets',
    resource: 'instances',
    params: [['limit', '100'], ['instanceType', 'node'], ['view', 'cdf_cdm:CogniteAsset/v1']],
  });
  const property = (name: string, from = name): InstanceColumn => ({
    name,
    kind: 'string',
    list: false,
    required: false,
    from: { property: from, type: 'text' },
  });
  const extra: InstanceColumn = { name: 'extra', kind: 'extra-json', list: false, required: false, from: { extra: true } };

  function instancesCheckpoint(columns: InstanceColumn[]): string {
    const checkpoint = newCheckpoint(BASE, [ASSETS], T0);
    checkpoint.streams.assets!.instances = { columns };
    return version5(checkpoint);
  }

  const fields = fieldColumns('node');
  const withoutVersion = fields.filter((column) => column.name !== 'version');
  const cases: [string, InstanceColumn[], string][] = [
    ['a property renamed `space` (two `space` columns)', [...fields, property('space', 'name'), extra], `instances.columns.${fields.length}.name: 'space' is the name of column 0 too`],
    ['a property renamed `Space` (one column to DuckDB and Spark)', [...fields, property('Space', 'name'), extra], `instances.columns.${fields.length}.name: 'Space' is the name of column 0 too`],
    ['a field\'s column renamed', [{ ...fields[0]!, name: 'where' }, ...fields.slice(1), extra], 'instances.columns.0.name: the column of the field \'space\' is always named \'space\''],
    ['a property under the name of a fixed column whose own column is gone', [...withoutVersion, property('version', 'name'), extra], 'the property \'name\' has the name of the fixed column \'version\''],
    ['`extra` renamed', [...fields, property('name'), { ...extra, name: 'rest' }], 'the column of the values without a column is always named \'extra\', not \'rest\''],
  ];

  it.each(cases)('%s', (_, columns, said) => {
    const message = refusal(instancesCheckpoint(columns));
    expect(message).toContain(`${FILE} holds what bulk-extract never writes (streams.assets.`);
    expect(message).toContain(said);
  });

  it('the columns instanceColumns makes are taken, a node\'s property named as an edge\'s field (`startNode`) among them', () => {
    const text = instancesCheckpoint([...fields, property('name'), property('startNode'), property('property_type', 'type'), extra]);
    expect(parseCheckpoint(text, FILE).streams.assets?.instances?.columns).toHaveLength(fields.length + 4);
  });
});
