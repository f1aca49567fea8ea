import { type Format, scheduledModes, type StreamConfig, type TableKind } from '../../config/job-schema.js';
import { ConfigError } from '../../errors.js';
import { planStream } from '../kinds/index.js';
import { streamName } from '../partition/index.js';
import type { StreamPlan } from '../state/index.js';

export { streamName };

/**
 * The streams of a job (or only `only`), with their request parameters, formats and table kind
 * (`table` set for a Delta table only), each planned by its kind (kinds/), and the modes of a new
 * export each run that the job file would accept for it.
 */
export function planStreams(
  streams: readonly StreamConfig[],
  defaultFormats: readonly Format[],
  only?: string,
  defaultTable: TableKind = 'files',
): StreamPlan[] {
  const selected = only === undefined ? streams : streams.filter((s) => streamName(s) === only);
  if (selected.length === 0) {
    throw new ConfigError(
      only === undefined
        ? 'streams: the job has no streams; add at least one (for example: streams: [{ resource: events }]).'
        : `--stream ${only}: no such stream; the job has ${streams.map(streamName).join(', ')}.`,
    );
  }
  return selected.map((stream): StreamPlan => {
    const table = stream.table ?? defaultTable;
    return {
      ...planStream(stream, defaultFormats),
      scheduledModes: scheduledModes(stream),
      ...(table === 'delta' ? { table } : {}),
    };
  });
}
