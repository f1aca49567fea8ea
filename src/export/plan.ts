import type { Format, Mode, Resource, StreamConfig } from '../config/job-schema.js';
import { ConfigError } from '../errors.js';
import { sentBounds, type StreamState } from './checkpoint.js';
import { partDir } from './layout.js';

/** One cursor chain to drain: a stream's partition m of n. */
export interface PartitionPlan {
  stream: string;
  resource: Resource;
  m: number;
  n: number;
  /** Every request parameter of the chain but `cursor`, in the order sent; includes `partition` when n > 1. */
  params: [string, string][];
  formats: Format[];
  /** incremental and snapshot: the run the chain belongs to (its folder `run=<run>`); null for a full export. */
  run: string | null;
  /** The partition's folder, relative to the output folder. */
  dir: string;
}

/** A stream as the checkpoint records it, to refuse a resume with other settings. */
export interface StreamPlan {
  name: string;
  resource: Resource;
  /** Parameters from the config (filters and limit), without the run's window and `partition`. */
  params: [string, string][];
  partitions: number;
  formats: Format[];
  mode: Mode;
  safetyLagMs: number;
  /** snapshot: completed snapshots to keep (undefined: all). */
  keep?: number | undefined;
  /** The config's own lastUpdatedTime bounds (inclusive), which the run's window stays within. */
  updatedBetween: { min: number | undefined; max: number | undefined };
}

/** Filter keys in the order they are sent: fixed, so equal configs give equal requests. */
const FILTER_ORDER = [
  'type',
  'subtype',
  'source',
  'minLastUpdatedTime',
  'maxLastUpdatedTime',
  'minStartTime',
  'maxStartTime',
] as const;

export function streamName(stream: StreamConfig): string {
  return stream.name ?? stream.resource;
}

/** The streams of a job (or only `only`), with their request parameters and formats. */
export function planStreams(
  streams: readonly StreamConfig[],
  defaultFormats: readonly Format[],
  only?: string,
): StreamPlan[] {
  const selected = only === undefined ? streams : streams.filter((s) => streamName(s) === only);
  if (selected.length === 0) {
    throw new ConfigError(
      only === undefined
        ? 'streams: the job has no streams; add at least one (for example: streams: [{ resource: events }]).'
        : `--stream ${only}: no such stream; the job has ${streams.map(streamName).join(', ')}.`,
    );
  }
  return selected.map((stream) => {
    const filter = stream.filter as Partial<Record<(typeof FILTER_ORDER)[number], string | number>>;
    const params: [string, string][] = [['limit', String(stream.limit)]];
    for (const key of FILTER_ORDER) {
      const value = filter[key];
      if (value !== undefined) params.push([key, String(value)]);
    }
    return {
      name: streamName(stream),
      resource: stream.resource,
      params,
      partitions: stream.partitions,
      formats: [...new Set(stream.formats ?? defaultFormats)],
      mode: stream.mode,
      safetyLagMs: stream.safetyLag,
      keep: stream.keep,
      updatedBetween: { min: stream.filter.minLastUpdatedTime, max: stream.filter.maxLastUpdatedTime },
    };
  });
}

/**
 * The parameters a stream's chains send in its current run: the config's, with the
 * lastUpdatedTime bounds of the run's window in place of the config's own.
 * A checkpoint of version 1 has no window: its chains go on with the config's parameters.
 */
export function chainParams(stream: StreamPlan, state: Pick<StreamState, 'window'>): [string, string][] {
  if (state.window === null) return [...stream.params];
  const bounds = sentBounds(state.window);
  const values = new Map<string, string | number | null>([...stream.params, ...Object.entries(bounds)]);
  const params: [string, string][] = [['limit', String(values.get('limit'))]];
  for (const key of FILTER_ORDER) {
    const value = values.get(key);
    if (value !== undefined && value !== null) params.push([key, String(value)]);
  }
  return params;
}

/** Streams x partitions: one cursor chain each, with the stream's state in the checkpoint. */
export function planPartitions(
  streams: readonly StreamPlan[],
  stateOf: (stream: string) => Pick<StreamState, 'window' | 'run'>,
): PartitionPlan[] {
  return streams.flatMap((stream) => {
    const state = stateOf(stream.name);
    const params = chainParams(stream, state);
    return Array.from({ length: stream.partitions }, (_, i): PartitionPlan => {
      const m = i + 1;
      const n = stream.partitions;
      return {
        stream: stream.name,
        resource: stream.resource,
        m,
        n,
        params: n === 1 ? [...params] : [...params, ['partition', `${m}/${n}`]],
        formats: stream.formats,
        run: state.run,
        dir: partDir(stream.name, m, n, state.run),
      };
    });
  });
}
