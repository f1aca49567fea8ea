import type { OutputStore } from '../../output/index.js';
import type { Clock } from '../../util/clock.js';
import { crashPoint } from '../../util/crash-point.js';
import { type Checkpoint, checkpointText, commitPart, type Manifest, MANIFEST_FILE, type ManifestFile, partOf, type PartState, type PartUpdate, restartPart, type RunState, summarize } from '../state/index.js';

export interface CommitterOptions {
  store: OutputStore;
  /** The run's checkpoint, or a worker's own. */
  checkpointKey: string;
  /** The output's `_manifest.json` (the default), or a worker's own manifest. */
  manifestKey?: string | undefined;
  checkpoint: Checkpoint;
  manifest: Manifest;
  clock: Clock;
}

/**
 * Owns the checkpoint and the manifest during a run. Partition drains commit through it; it
 * serializes their writes so each commit lands whole and in order.
 *
 * The invariant across a crash at any point: every shard the checkpoint counts is on disk and
 * listed in the manifest. Adding shards writes the manifest first, then the checkpoint; forgetting
 * them (a fresh start, a partition restarted) writes the checkpoint first, then the manifest.
 */
export class Committer {
  private tail: Promise<void> = Promise.resolve();
  private checkpoint: Checkpoint;
  private manifest: Manifest;
  private readonly store: OutputStore;
  private readonly checkpointKey: string;
  private readonly manifestKey: string;
  private readonly clock: Clock;

  constructor(options: CommitterOptions) {
    this.store = options.store;
    this.checkpointKey = options.checkpointKey;
    this.manifestKey = options.manifestKey ?? MANIFEST_FILE;
    this.checkpoint = options.checkpoint;
    this.manifest = options.manifest;
    this.clock = options.clock;
  }

  get state(): Checkpoint {
    return this.checkpoint;
  }

  get files(): readonly ManifestFile[] {
    return this.manifest.files;
  }

  part(stream: string, m: number): PartState {
    return partOf(this.checkpoint, stream, m);
  }

  /** Records shards (renamed into place already) and the cursor after them. */
  commit(
    stream: string,
    m: number,
    files: readonly ManifestFile[],
    update: PartUpdate,
  ): Promise<void> {
    return this.serially(async () => {
      const now = this.now();
      this.manifest = { ...this.manifest, files: [...this.manifest.files, ...files] };
      this.checkpoint = commitPart(this.checkpoint, stream, m, { ...update, shards: files.length > 0 ? 1 : 0 }, now);
      await this.persist('manifest-first');
    });
  }

  /** Forgets a partition's shards and progress, after its files were deleted. */
  restart(stream: string, m: number): Promise<void> {
    return this.serially(async () => {
      this.manifest = {
        ...this.manifest,
        files: this.manifest.files.filter((file) => file.stream !== stream || file.m !== m),
      };
      this.checkpoint = restartPart(this.checkpoint, stream, m, this.now());
      await this.persist('checkpoint-first');
    });
  }

  /** Writes the final manifest state (timings, counters, schema). */
  finish(state: RunState, extra: Partial<Manifest>): Promise<Manifest> {
    return this.serially(async () => {
      const finishedAt = this.now();
      this.manifest = {
        ...this.manifest,
        ...extra,
        schema: { ...this.manifest.schema, ...extra.schema },
        state,
        finishedAt,
        durationMs: Date.parse(finishedAt) - Date.parse(this.manifest.startedAt),
      };
      await this.persist('manifest-first');
      return this.manifest;
    });
  }

  /**
   * Writes both files as they are at the start of a run. Preparing a run only ever forgets shards
   * (a fresh start, files past the checkpoint), so the checkpoint goes first.
   */
  save(): Promise<void> {
    return this.serially(() => this.persist('checkpoint-first'));
  }

  private async persist(order: 'manifest-first' | 'checkpoint-first'): Promise<void> {
    this.manifest = { ...this.manifest, streams: summarize(this.checkpoint, this.manifest.files) };
    const manifest = async () => {
      await this.store.putText(this.manifestKey, `${JSON.stringify(this.manifest, null, 2)}\n`);
      crashPoint('after-manifest-write');
    };
    const checkpoint = async () => {
      await this.store.putText(this.checkpointKey, checkpointText(this.checkpoint));
      crashPoint('after-checkpoint-write');
    };
    if (order === 'manifest-first') {
      await manifest();
      await checkpoint();
    } else {
      await checkpoint();
      await manifest();
    }
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }
}
