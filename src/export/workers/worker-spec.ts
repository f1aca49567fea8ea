import { UsageError } from '../../errors.js';

/** This worker: number `index` (0-based, as Kubernetes' JOB_COMPLETION_INDEX) of `count`. */
export interface WorkerSpec {
  index: number;
  count: number;
}

export const MAX_WORKERS = 1000;

/** `I/K`, I from 0 to K-1. */
export function parseWorker(value: string, flag = '--shard'): WorkerSpec {
  const match = /^(\d+)\/(\d+)$/.exec(value.trim());
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (match === null || count < 1 || count > MAX_WORKERS || index >= count) {
    throw new UsageError(
      `${flag} '${value}': expected I/K with K from 1 to ${MAX_WORKERS} and I from 0 to K-1 (worker I of K, 0-based like JOB_COMPLETION_INDEX), e.g. 0/4.`,
    );
  }
  return { index, count };
}

/**
 * This worker's index and count from `--shard I/K`, or `--shards K` and the JOB_COMPLETION_INDEX that
 * Kubernetes sets in each pod of an Indexed Job. Undefined when neither flag is given.
 */
export function resolveWorker(
  flags: { shard?: string | undefined; shards?: string | undefined },
  env: NodeJS.ProcessEnv,
): WorkerSpec | undefined {
  const fromEnv = env.JOB_COMPLETION_INDEX;
  if (flags.shard !== undefined && flags.shards !== undefined) {
    throw new UsageError('--shard I/K and --shards K are two ways to say the same thing: give one.');
  }
  if (flags.shard !== undefined) {
    const spec = parseWorker(flags.shard);
    if (fromEnv !== undefined && fromEnv !== '' && Number(fromEnv) !== spec.index) {
      throw new UsageError(
        `--shard ${flags.shard} says shard ${spec.index}, but JOB_COMPLETION_INDEX is ${fromEnv}: in an Indexed Job, pass --shards ${spec.count} and let the index come from the pod.`,
      );
    }
    return spec;
  }
  if (flags.shards === undefined) return undefined;
  if (fromEnv === undefined || fromEnv === '') {
    throw new UsageError(
      `--shards ${flags.shards} takes this worker's index from JOB_COMPLETION_INDEX (set by Kubernetes in an Indexed Job), which is not set: outside Kubernetes, pass --shard I/${flags.shards}.`,
    );
  }
  if (!/^\d+$/.test(flags.shards)) throw new UsageError(`--shards expects a whole number of shards, got '${flags.shards}'.`);
  return parseWorker(`${fromEnv}/${flags.shards}`, `JOB_COMPLETION_INDEX=${fromEnv} with --shards`);
}
