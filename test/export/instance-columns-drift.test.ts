import { describe, expect, it } from 'vitest';
import { type Checkpoint, findDrift, newCheckpoint } from '../../src/export/state/checkpoint.js';
import type { StreamPlan } from '../../src/export/state/stream-plan.js';
import { fieldColumns, type InstanceColumn, instanceColumns, type ViewDefinition } from '../../src/resources/index.js';
import { type PlanOverrides, streamPlan } from '../support/streams.js';

/**
 * An instances stream records its columns when it begins, and a resume keeps them (one schema per
 * stream). A stream an earlier version began with a column named like a folder key (`part`, `run`)
 * is not resumed under the old name nor under the new: it is drift, naming the columns, the new
 * names and `--fresh --stream`.
 */
const BASE = 'https://acme.example.com/api/v1/projects/acme';
const T0 = '2026-01-01T00:00:00.000Z';
const VIEW = { space: 'plant', externalId: 'Pump', version: 'v1' };

const text = (property: string) => ({
  container: { space: 'plant', externalId: 'PumpContainer' },
  containerPropertyIdentifier: property,
  type: { type: 'text' },
});
const view = (names: string[]): ViewDefinition => ({
  ...VIEW,
  properties: Object.fromEntries(names.map((name) => [name, text(name)])),
});

const plan = (overrides: PlanOverrides = {}): StreamPlan =>
  streamPlan({
    name: 'pumps',
    resource: 'instances',
    instances: { view: VIEW, instanceType: 'node', queries: [undefined], scopes: [{}] },
    ...overrides,
  } as PlanOverrides);

/** A checkpoint whose stream began with `columns`. */
function begunWith(stream: StreamPlan, columns: InstanceColumn[]): Checkpoint {
  const checkpoint = newCheckpoint(BASE, [stream], T0);
  checkpoint.streams[stream.name]!.instances = { columns };
  return checkpoint;
}

/** The columns bulk-extract wrote before folder keys were renamed: `part` and `run` as they are. */
function columnsBefore(names: string[]): InstanceColumn[] {
  const property = (name: string, column: string): InstanceColumn => ({
    name: column,
    kind: 'string',
    list: false,
    required: false,
    from: { property: name, type: 'text' },
  });
  const extra: InstanceColumn = { name: 'extra', kind: 'extra-json', list: false, required: false, from: { extra: true } };
  const taken = new Set([...fieldColumns('node').map((column) => column.name.toLowerCase()), 'extra']);
  const properties = names.map((name) => {
    const column = taken.has(name.toLowerCase()) ? `property_${name}` : name;
    taken.add(column.toLowerCase());
    return property(name, column);
  });
  return [...fieldColumns('node'), ...properties, extra];
}

describe('a resume of an instances stream whose columns this version names otherwise', () => {
  it('a stream begun with columns part and run is drift, naming them, their new names and --fresh --stream', () => {
    const names = ['pressure', 'part', 'run', 'Part'];
    const drift = findDrift(begunWith(plan(), columnsBefore(names)), BASE, [plan()]);
    expect(drift).toHaveLength(1);
    expect(drift[0]).toContain("stream 'pumps'");
    expect(drift[0]).toContain('[part -> property_part, run -> property_run, property_Part -> property_Part_2]');
    expect(drift[0]).toContain('--fresh --stream pumps');
  });

  it('no drift: a stream begun with the names this version gives, with no such property, or writing only NDJSON', () => {
    const now = instanceColumns(view(['pressure', 'part', 'run', 'Part']), 'node').columns;
    expect(findDrift(begunWith(plan(), [...now]), BASE, [plan()])).toEqual([]);
    const plain = columnsBefore(['pressure', 'type', 'flow']);
    expect(findDrift(begunWith(plan(), plain), BASE, [plan()])).toEqual([]);
    const ndjson = plan({ formats: ['ndjson'] });
    expect(findDrift(begunWith(ndjson, columnsBefore(['part'])), BASE, [ndjson])).toEqual([]);
  });
});
