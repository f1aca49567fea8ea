import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { OutputError } from '../../errors.js';
import { type Logger, silentLogger } from '../../log.js';
import { type CpuLimit, cpuLimit, describeCpuLimit } from '../../util/cpu-limit.js';
import type { EncodeJob } from './encode.js';
import type { FromEncoder, ToEncoder } from './encoder-thread.js';
import { freeOwned, markOwned } from '../../util/owned-memory.js';

interface Pending {
  id: number;
  job: EncodeJob;
  onChunk: (chunk: Uint8Array) => Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

interface Running extends Pending {
  /** The chunks written so far, in order; the job settles after the last one. */
  writing: Promise<void>;
  writeError?: unknown;
}

export interface EncoderPoolOptions {
  /** Threads at most; default defaultEncoderThreads() of the CPUs the process may use, decided on first use. */
  threads?: number | undefined;
  /** Where the default's figure, and why, is logged (debug, once). */
  logger?: Logger | undefined;
  /** The CPUs the process may use; default cpuLimit(), read from the process's cgroups. */
  cpuLimit?: () => CpuLimit;
}

/**
 * Encoder threads for Parquet shards. Each runs parquet-wasm in its own thread, one shard at a
 * time, so the export's main thread keeps fetching and parsing pages while shards encode, and only
 * as many wasm writers exist as there are threads (each open writer costs 10-20 MB of wasm memory,
 * bench/RESULTS.md, "Levers kept"). Threads start on first use and do not keep the process alive when idle;
 * close() ends them. One pool per export run (see shard-sink.ts), so runs in one process share no thread.
 */
export class EncoderPool {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Running>();
  private readonly queue: Pending[] = [];
  private nextId = 0;
  private closed = false;
  private size: number | undefined;

  constructor(private readonly options: EncoderPoolOptions = {}) {
    const size = options.threads;
    if (size !== undefined && (!Number.isInteger(size) || size < 1)) {
      throw new RangeError(`EncoderPool: threads must be an integer >= 1, got ${size}`);
    }
    this.size = size;
  }

  /** Threads running now, busy or idle: 0 before the first job and after close(). */
  get threads(): number {
    return this.idle.length + this.busy.size;
  }

  /**
   * Encodes one spill file; `onChunk` receives the Parquet file's bytes in order, and must not keep
   * a chunk once its promise resolves: the chunk's memory is freed then (util/owned-memory.ts).
   */
  encode(job: EncodeJob, onChunk: (chunk: Uint8Array) => Promise<void>): Promise<void> {
    if (this.closed) return Promise.reject(encodeError(job.spillPath, 'the encoder pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, job, onChunk, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Stops every thread and refuses later jobs. A job still queued or encoding is rejected (its
   * shard is not committed). Resolves once the threads have exited.
   *
   * An idle thread is asked to end itself: `terminate()` on a thread that has run WebAssembly can
   * crash the whole process while Node tears the thread down (nodejs/node#47748). Only a thread
   * still encoding, whose shard is given up anyway, is terminated.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(encodeError(pending.job.spillPath, 'the encoder pool was closed'));
    const idle = this.idle.splice(0);
    await Promise.all([...idle.map(endIdle), ...[...this.busy.keys()].map((thread) => thread.terminate())]);
  }

  private dispatch(): void {
    if (this.closed) return;
    while (this.queue.length > 0) {
      const thread = this.idle.pop() ?? (this.busy.size < this.maxThreads() ? this.spawn() : undefined);
      if (thread === undefined) return;
      const pending = this.queue.shift()!;
      this.busy.set(thread, { ...pending, writing: Promise.resolve() });
      thread.ref();
      thread.postMessage({ id: pending.id, job: pending.job } satisfies ToEncoder);
    }
  }

  /**
   * The most threads: the option, or else decided when the first thread is needed (an NDJSON-only
   * run reads no cgroup file) and kept for the pool's life (one run).
   */
  private maxThreads(): number {
    if (this.size !== undefined) return this.size;
    const limit = (this.options.cpuLimit ?? cpuLimit)();
    const size = defaultEncoderThreads(limit);
    const fields = {
      encoderThreads: size,
      cpus: limit.cpus,
      availableCpus: limit.available,
      cpuQuota: limit.quota?.cpus,
      cpuQuotaFile: limit.quota?.file,
    };
    (this.options.logger ?? silentLogger).debug(fields, `Parquet encoder threads: at most ${size}, for ${describeCpuLimit(limit)}`);
    this.size = size;
    return size;
  }

  private spawn(): Worker {
    const thread = new Worker(threadUrl());
    thread.on('message', (message: FromEncoder) => this.onMessage(thread, message));
    // A thread's uncaught exception is whatever it threw (typed any).
    thread.on('error', (error: unknown) => this.onExit(thread, error instanceof Error ? error : new Error(String(error))));
    thread.on('exit', (code) => this.onExit(thread, new Error(`the Parquet encoder thread exited (code ${code})`)));
    return thread;
  }

  private onMessage(thread: Worker, message: FromEncoder): void {
    const running = this.busy.get(thread);
    if (running === undefined || running.id !== message.id) return;
    if ('chunk' in message) {
      // The chunk's buffer moved here from the thread: the pool's alone, freed once written.
      const chunk = markOwned(message.chunk);
      running.writing = running.writing.then(() =>
        running.writeError === undefined
          ? running.onChunk(chunk).then(
              () => freeOwned(chunk),
              (error: unknown) => {
                running.writeError = error;
              },
            )
          : undefined,
      );
      return;
    }
    this.busy.delete(thread);
    thread.unref();
    this.idle.push(thread);
    void running.writing.then(() => {
      if (running.writeError !== undefined) running.reject(running.writeError as Error);
      else if ('error' in message) running.reject(encodeError(running.job.spillPath, message.error));
      else running.resolve();
    });
    this.dispatch();
  }

  private onExit(thread: Worker, error: Error): void {
    const running = this.busy.get(thread);
    this.busy.delete(thread);
    const at = this.idle.indexOf(thread);
    if (at >= 0) this.idle.splice(at, 1);
    if (running !== undefined) {
      void running.writing.then(() => running.reject(encodeError(running.job.spillPath, error.message)));
    }
    this.dispatch();
  }
}

/** How long an idle thread may take to end itself before it is terminated after all. */
const IDLE_EXIT_MS = 10_000;

/** Asks an idle thread to close its port, so that it exits by itself, and waits for it. */
async function endIdle(thread: Worker): Promise<void> {
  // Held while it exits, so that the process does not end (and tear the thread down) meanwhile.
  thread.ref();
  const exited = once(thread, 'exit');
  thread.postMessage({ close: true } satisfies ToEncoder);
  const fallback = setTimeout(() => void thread.terminate(), IDLE_EXIT_MS);
  try {
    await exited;
  } finally {
    clearTimeout(fallback);
  }
}

function encodeError(spillPath: string, message: string): OutputError {
  return new OutputError(
    `Encoding ${spillPath} into Parquet failed: ${message}. Shards committed before this and the checkpoint are ` +
    'intact; run again to resume.',
  );
}

/**
 * The thread's script: the compiled encoder-thread.js beside this module. Under vitest this module is
 * the TypeScript source, which a thread thread cannot load, so the build's copy is used (`npm test`
 * builds before it tests).
 */
function threadUrl(): URL {
  return import.meta.url.endsWith('.ts')
    ? new URL('../../../dist/sink/parquet/encoder-thread.js', import.meta.url)
    : new URL('./encoder-thread.js', import.meta.url);
}

/**
 * One thread where the process may use up to 2 CPUs (the main thread needs the other), at most 4:
 * CPUs as the cgroup CPU limit allows (a pod's `limits.cpu`), not as many as the node has.
 */
export function defaultEncoderThreads(limit: CpuLimit = cpuLimit()): number {
  return Math.min(4, Math.max(1, limit.cpus - 1));
}
