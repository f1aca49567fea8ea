import type { Format, StreamConfig } from '../../config/job-schema.js';
import type { ConfigError } from '../../errors.js';
import type { AccessError, AuthError, HttpStatusError } from '../../http/errors.js';
import type { PlatformClient } from '../../http/platform-client.js';
import type { Logger } from '../../log.js';
import type { Resource } from '../../resources/index.js';
import type { Checkpoint, StreamPlan, StreamState } from '../state/index.js';
import type { PartitionContext, PartitionOutcome } from './partition-context.js';
import type { PartitionPlan } from './partition-plan.js';

/** A chain's first request: GET with a query, or POST with a JSON body. */
export type ListRequest =
  | { method: 'GET'; path: string; params: readonly (readonly [string, string])[] } |
  { method: 'POST'; path: string; body: Record<string, unknown> };

/** The client a kind counts with before the run writes anything. */
export type CountClient = Pick<PlatformClient, 'aggregateCount' | 'get' | 'post'>;

/** The platform's count of what a stream's run reads: its rows, or (datapoints) the series it lists. */
export interface StreamTotal {
  items?: number | undefined;
  series?: number | undefined;
}

/** What a kind is given when its stream's partitions start draining in this process. */
export interface StreamRun<P extends StreamPlan = StreamPlan> {
  stream: P;
  /** The stream's partitions this process drains (a worker of a split job drains some). */
  plans: readonly PartitionPlan<P>[];
  checkpoint: Checkpoint;
  /** The platform's count of the stream (countStreams), once known. */
  total: () => StreamTotal | undefined;
  /** source.maxReadFactor: how far past its count a stream may read. */
  maxReadFactor: number;
  logger: Logger;
}

/** How the partitions of one stream drain in this run. */
export interface StreamDrain<P extends StreamPlan = StreamPlan> {
  /** Drains one partition into shards, from where its checkpoint stands. */
  drain(ctx: PartitionContext, plan: PartitionPlan<P>, log: Logger): Promise<PartitionOutcome>;
}

/**
 * A kind of stream (the six collections, datapoints, data-model instances): everything the engine
 * asks of a stream that depends on what it reads. The engine plans, counts, drains and describes
 * every stream through its kind, and never asks which kind it is.
 */
export interface StreamKind<C extends StreamConfig = StreamConfig, P extends StreamPlan = StreamPlan> {
  /** The stream of the job file, planned: its parameters (a change of which is drift), partitions, formats, mode. */
  plan(stream: C, defaultFormats: readonly Format[]): P;
  /** The parameters a partition's chain sends in the stream's current run (its window's bounds included). */
  chainParams(stream: P, state: Pick<StreamState, 'window'>): [string, string][];
  /** The parameter that names partition m of n among a chain's (`partition`, or `query` for instances' split). */
  readonly partitionParam: string;
  /**
   * What a run reads before it writes (which proves the credential): the platform's count of the
   * stream, and what its shards need to know first (an instances stream's view columns, kept in
   * `state`). A refused credential or access is thrown.
   */
  count(
    client: CountClient,
    stream: P,
    state: StreamState,
    logger: Logger,
    signal?: AbortSignal,
  ): Promise<StreamTotal>;
  /** The stream's partitions' drain in this run. */
  start(run: StreamRun<P>): StreamDrain<P>;
  /**
   * A resume cursor the platform refused: the error that fails the partition, or undefined to read
   * it again from its first page.
   */
  cursorRefused(cause: HttpStatusError, plan: PartitionPlan<P>, state: StreamState | undefined): Error | undefined;
  /**
   * The collection whose pages the stream's chains list (datapoints: the series'), which the dry
   * run probes; none for instances.
   */
  listedCollection(stream: P): Resource | undefined;
  /** The request a partition's chain starts with (the dry run shows the first). */
  firstRequest(stream: P, state: Pick<StreamState, 'window'>): ListRequest;
  /**
   * The dry run's lines about the stream, from what it asks the platform (a count, the view's
   * columns), and the refusal a run would stop with, if any.
   */
  dryRun(client: DryRunClient, stream: DryRunStream<P>): Promise<DryRunLines>;
  /**
   * What the summary and the log say of the stream's run that read everything and found no row,
   * when that needs saying (a datapoints window in which the series selected hold no point, and
   * where their newest point is), or undefined. It may ask the platform a few bounded questions;
   * it never throws: a failed question leaves the note shorter, never fails the run.
   */
  emptyRun(
    client: EmptyRunClient,
    stream: P,
    state: StreamState,
    logger: Logger,
    signal?: AbortSignal,
  ): Promise<string | undefined>;
}

/** The client a kind asks with about a run that found no row: a page of a listing, a small POST. */
export type EmptyRunClient = Pick<PlatformClient, 'getPage' | 'postPage' | 'post'>;

/** The client the dry run asks with. */
export type DryRunClient = Pick<PlatformClient, 'aggregateCount' | 'post'>;

/** What the dry run knows of a stream before its kind describes it. */
export interface DryRunStream<P extends StreamPlan = StreamPlan> {
  plan: P;
  /** Its chains' first request (firstRequest), and that request as the dry run shows it. */
  request: ListRequest;
  listed: string;
  /** What its runs write: formats, mode, a Delta table. */
  written: string;
  /** The point times a run reads (datapoints). */
  pointWindow?: { start: number; end: number } | undefined;
  /** The Parquet column each of its `metadataColumns` keys becomes. */
  metadataColumns?: { key: string; column: string }[] | undefined;
  /** Where the run before left its window (an incremental stream's last start); null: none, or --fresh. */
  since: number | null;
  /** What this run does with the stream; `from`: where a run that starts reads from. */
  action: (from?: string) => string;
}

/** A stream's lines of the dry run, each a line of text, and what a run would be refused for. */
export interface DryRunLines {
  lines: string[];
  refusal?: ConfigError | AccessError | AuthError | undefined;
}

/** A stream's name in the job file: its own, or its resource's. */
export function streamName(stream: StreamConfig): string {
  return stream.name ?? stream.resource;
}

/** What every kind's plan takes from the job file alike: the stream's name and its formats (each once). */
export function namedFormats(
  stream: StreamConfig,
  defaultFormats: readonly Format[],
): { name: string; formats: Format[] } {
  return { name: streamName(stream), formats: [...new Set(stream.formats ?? defaultFormats)] };
}
