import type { Format, Resource, StreamConfig } from '../config/job-schema.js';
import { ConfigError } from '../errors.js';

/** One cursor chain to drain: a stream's partition m of n. */
export interface PartitionPlan {
  stream: string;
  resource: Resource;
  m: number;
  n: number;
  /** Every request parameter of the chain but `cursor`, in the order sent; includes `partition` when n > 1. */
  params: [string, string][];
  formats: Format[];
}

/** A stream as the checkpoint records it, to refuse a resume with other settings. */
export interface StreamPlan {
  name: string;
  resource: Resource;
  /** Chain parameters without `partition`. */
  params: [string, string][];
  partitions: number;
  formats: Format[];
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
    };
  });
}

/** Streams x partitions: one cursor chain each. */
export function planPartitions(streams: readonly StreamPlan[]): PartitionPlan[] {
  return streams.flatMap((stream) =>
    Array.from({ length: stream.partitions }, (_, i): PartitionPlan => {
      const m = i + 1;
      const n = stream.partitions;
      return {
        stream: stream.name,
        resource: stream.resource,
        m,
        n,
        params: n === 1 ? [...stream.params] : [...stream.params, ['partition', `${m}/${n}`]],
        formats: stream.formats,
      };
    }),
  );
}
