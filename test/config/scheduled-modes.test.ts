import { describe, expect, it } from 'vitest';
import { scheduledModes, streamSchema } from '../../src/config/job-schema.js';

/**
 * The modes of a new export each run that a stream would be accepted with (what the "nothing to
 * do" of a complete full export suggests): every kind takes snapshot; incremental only where the
 * stream's other keys allow it.
 */
describe('scheduledModes', () => {
  const VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
  it.each([
    ['a collection', { resource: 'events' }, ['incremental', 'snapshot']],
    ['a collection with its own maxLastUpdatedTime', { resource: 'events', filter: { maxLastUpdatedTime: 5 } }, ['snapshot']],
    ['raw datapoints', { resource: 'datapoints', start: '30d-ago' }, ['incremental', 'snapshot']],
    ['datapoints with an end', { resource: 'datapoints', end: 'now' }, ['snapshot']],
    ['datapoints aggregates', { resource: 'datapoints', aggregates: ['average'], granularity: '1h' }, ['snapshot']],
    ['instances', { resource: 'instances', view: VIEW }, ['incremental', 'snapshot']],
  ])('%s: %j accepts %j', (_, stream, modes) => {
    expect(scheduledModes(streamSchema.parse(stream))).toEqual(modes);
  });

  it('keep of a snapshot stream is no obstacle to incremental', () => {
    expect(scheduledModes(streamSchema.parse({ resource: 'assets', mode: 'snapshot', keep: 2 }))).toEqual(['incremental', 'snapshot']);
  });
});
