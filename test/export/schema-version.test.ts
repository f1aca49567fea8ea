import { describe, expect, it } from 'vitest';
import { findDrift, newCheckpoint, parseCheckpoint } from '../../src/export/state/checkpoint.js';
import type { StreamPlan } from '../../src/export/state/stream-plan.js';
import { type PlanOverrides, streamPlan } from '../support/streams.js';
import { RESOURCE_SPECS, resourceSpec } from '../../src/resources/index.js';

/**
 * A collection's Parquet schema has a version (ResourceSpec.schemaVersion); a checkpoint records the
 * one its stream writes, and a resume that would write another into the same stream is drift.
 */
const BASE = 'https://acme.example.com/api/v1/projects/acme';
const T0 = '2026-01-01T00:00:00.000Z';

const plan = (overrides: PlanOverrides = {}): StreamPlan => streamPlan({ name: 'assets', resource: 'assets', ...overrides } as PlanOverrides);

/** A checkpoint as a version that did not record schemaVersion wrote it. */
function legacy(stream: StreamPlan) {
  const checkpoint = newCheckpoint(BASE, [stream], T0);
  const { schemaVersion: _, ...state } = checkpoint.streams[stream.name]!;
  // Such a version (5 or earlier) wrote no digest either.
  return parseCheckpoint(JSON.stringify({ ...checkpoint, version: 5, streams: { [stream.name]: state } }), '/x/_checkpoint.json');
}

describe('the Parquet schema version in the checkpoint', () => {
  it.each(RESOURCE_SPECS.map((spec) => [spec.name, spec.schemaVersion] as const))('a new %s stream records version %i', (name, version) => {
    const stream = plan({ name, resource: name });
    expect(newCheckpoint(BASE, [stream], T0).streams[name]?.schemaVersion).toBe(version);
  });

  it('assets, files, relationships and sequences are at version 2 (labels, parentExternalId, sequence column ids)', () => {
    for (const name of ['assets', 'files', 'relationships', 'sequences'] as const) expect(resourceSpec(name).schemaVersion).toBe(2);
  });

  it('a resume of a stream begun in another schema version is drift, naming the stream, both versions and --fresh', () => {
    const drift = findDrift(legacy(plan()), BASE, [plan()]);
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatch(/stream 'assets'/);
    expect(drift[0]).toMatch(/version 1 of the assets schema/);
    expect(drift[0]).toMatch(/writes version 2/);
    expect(drift[0]).toMatch(/--fresh/);
  });

  it('no drift: the same version, a collection whose schema did not change, or a stream writing only NDJSON', () => {
    expect(findDrift(newCheckpoint(BASE, [plan()], T0), BASE, [plan()])).toEqual([]);
    const events = plan({ name: 'events', resource: 'events' });
    expect(findDrift(legacy(events), BASE, [events])).toEqual([]);
    const ndjson = plan({ formats: ['ndjson'] });
    expect(findDrift(legacy(ndjson), BASE, [ndjson])).toEqual([]);
  });
});
