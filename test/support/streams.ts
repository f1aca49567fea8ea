import type { StreamConfig } from '../../src/config/job-schema.js';

/** A collection stream's `filter` (a datapoints stream has none: undefined). */
export function filterOf(stream: StreamConfig | undefined): unknown {
  return stream !== undefined && 'filter' in stream ? stream.filter : undefined;
}
