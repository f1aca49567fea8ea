import type { PlatformClient } from '../../http/platform-client.js';
import type { ByteBudget } from '../../page/index.js';
import { type Checkpoint, type ManifestFile, seriesDoneOf, streamOf, type StreamPlan, streamRecord, syncPhase } from '../state/index.js';
import type { PartitionPlan } from '../partition/index.js';

/** A stream's progress as the run sees it. */
export interface StreamProgress {
  name: string;
  /** Rows committed by earlier runs of its current run, plus rows read by this one. */
  rows: number;
  /**
   * The platform's (approximate) count of what this run reads in all, when it answered one. Not
   * for the changes run of an incremental instances stream, which reads what changed: its view's
   * count bounds it (streamRows), but is no total of it.
   */
  total: number | undefined;
  partitions: number;
  done: number;
  /**
   * Datapoints (rows are points): series read to their end in the stream's current run (a series
   * read in windows counts once), those of earlier runs it resumed included.
   */
  series?: number | undefined;
  /** Datapoints: the series selected (the listing's count, or the explicit list), this worker's share. */
  seriesTotal?: number | undefined;
}

/** What a progress display (or the metrics) asks a running export. */
export interface RunHandle {
  client: PlatformClient;
  /** The response bytes held in memory now, and the pages holding them. */
  budget: ByteBudget;
  plans: readonly PartitionPlan[];
  /** The shards this run committed so far (not those of earlier runs it resumed), all formats. */
  written(): ManifestFile[];
  rows(): number;
  /** Rows this run read of `stream` so far: written to open shards, committed or not. */
  rowsRead(stream: string): number;
  partitionsDone(): number;
  streams(): StreamProgress[];
}

/** Counts what a run reads and finishes, per stream, for progress displays. */
export class RunProgress {
  private rowsRead = 0;
  private partitionsDone = 0;
  private readonly read = new Map<string, number>();
  private readonly done = new Map<string, number>();
  private readonly seriesDone = new Map<string, number>();
  private readonly committed: Map<string, number>;
  /** Datapoints streams: series their checkpoint counts done when this run started. */
  private readonly seriesBefore: Map<string, number>;
  /** Incremental instances streams whose run reads the changes since the last, not the whole view. */
  private readonly changes: Set<string>;

  constructor(
    private readonly streams: readonly StreamPlan[],
    private readonly plans: readonly PartitionPlan[],
    checkpoint: Checkpoint,
    /** The platform's counts per stream, once known: its items, or a datapoints stream's series. */
    private readonly totals: () => { items: ReadonlyMap<string, number>; series: ReadonlyMap<string, number> },
  ) {
    const rowsOf = (name: string) =>
      Object.values(streamOf(checkpoint, name).parts).reduce((sum, p) => sum + p.rows, 0);
    this.committed = new Map(streams.map((s) => [s.name, rowsOf(s.name)]));
    this.seriesBefore = new Map(
      streams.map((s) => [s.name, seriesDoneOf(streamOf(checkpoint, s.name), explicitSeries(s))]),
    );
    this.changes = new Set(streams.filter((s) => syncPhase(streamOf(checkpoint, s.name)) === 'changes').map((s) => s.name));
  }

  get rows(): number {
    return this.rowsRead;
  }

  onRows(count: number, stream: string): void {
    this.rowsRead += count;
    this.read.set(stream, (this.read.get(stream) ?? 0) + count);
  }

  onSeriesDone(count: number, stream: string): void {
    this.seriesDone.set(stream, (this.seriesDone.get(stream) ?? 0) + count);
  }

  onPartitionDone(stream: string): void {
    this.partitionsDone++;
    this.done.set(stream, (this.done.get(stream) ?? 0) + 1);
  }

  /** `files()`: the manifest's shards now; those listed at this call are earlier runs'. */
  handle(client: PlatformClient, budget: ByteBudget, files: () => readonly ManifestFile[]): RunHandle {
    // A repaired shard may come back under its old path: it is this run's when its bytes differ.
    const key = (file: ManifestFile) => `${file.path} ${file.sha256}`;
    const earlier = new Set(files().map(key));
    return {
      client,
      budget,
      plans: this.plans,
      written: () => files().filter((file) => !earlier.has(key(file))),
      rows: () => this.rowsRead,
      rowsRead: (stream) => this.read.get(stream) ?? 0,
      partitionsDone: () => this.partitionsDone,
      streams: () => this.current(),
    };
  }

  /** Each stream's progress now. */
  current(): StreamProgress[] {
    return this.streams.map((s) => this.ofStream(s));
  }

  /**
   * A stream's rows so far, and the platform's count of the stream (this worker's share), its total
   * (ofStream) or, for an incremental instances stream's changes, what bounds them: for the read limit.
   */
  streamRows(name: string): { rows: number; total: number | undefined } {
    const stream = this.streams.find((s) => s.name === name);
    if (stream === undefined) return { rows: 0, total: undefined };
    return { rows: this.rowsOf(stream), total: this.countOf(stream) };
  }

  private rowsOf(stream: StreamPlan): number {
    return (this.committed.get(stream.name) ?? 0) + (this.read.get(stream.name) ?? 0);
  }

  /** The platform's count of the stream, this worker's share of it: a worker reads its share of the partitions. */
  private countOf(stream: StreamPlan): number | undefined {
    const mine = this.plans.filter((p) => p.stream.name === stream.name).length;
    const total = this.totals().items.get(stream.name);
    return total === undefined ? undefined : Math.round((total * mine) / stream.partitions);
  }

  /** A datapoints stream's series selected, this worker's share: the explicit list, or the platform's count. */
  private seriesOf(stream: StreamPlan): number | undefined {
    const mine = this.plans.filter((p) => p.stream.name === stream.name).length;
    const total = explicitSeries(stream) ?? this.totals().series.get(stream.name);
    return total === undefined ? undefined : Math.round((total * mine) / stream.partitions);
  }

  private ofStream(stream: StreamPlan): StreamProgress {
    const mine = this.plans.filter((p) => p.stream.name === stream.name).length;
    return {
      name: stream.name,
      rows: this.rowsOf(stream),
      total: this.changes.has(stream.name) ? undefined : this.countOf(stream),
      partitions: mine,
      done: this.done.get(stream.name) ?? 0,
      ...(streamRecord(stream.resource).rows === 'points'
        ? {
            series: (this.seriesBefore.get(stream.name) ?? 0) + (this.seriesDone.get(stream.name) ?? 0),
            seriesTotal: this.seriesOf(stream),
          }
        : {}),
    };
  }
}

/** The length of a datapoints stream's explicit list of series; undefined when they are listed (or another kind). */
function explicitSeries(stream: StreamPlan): number | undefined {
  return stream.points?.ids?.length ?? stream.points?.externalIds?.length;
}
