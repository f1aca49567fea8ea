import { streamKind } from '../kinds/index.js';
import type { ListRequest, PartitionPlan } from '../partition/index.js';
import { partDir, type StreamPlan, type StreamState } from '../state/index.js';

/** The parameters a stream's chains send in its current run (its kind's, with the run's window). */
export function chainParams(stream: StreamPlan, state: Pick<StreamState, 'window'>): [string, string][] {
  return streamKind(stream.resource).chainParams(stream, state);
}

/** The request a stream's chains start with (the dry run shows it). */
export function firstRequest(stream: StreamPlan, state: Pick<StreamState, 'window'>): ListRequest {
  return streamKind(stream.resource).firstRequest(stream, state);
}

/** Streams x partitions: one cursor chain each, with the stream's state in the checkpoint. */
export function planPartitions(
  streams: readonly StreamPlan[],
  stateOf: (stream: string) => Pick<StreamState, 'window' | 'run'>,
): PartitionPlan[] {
  return streams.flatMap((stream) => {
    const state = stateOf(stream.name);
    const kind = streamKind(stream.resource);
    const params = kind.chainParams(stream, state);
    return Array.from({ length: stream.partitions }, (_, i): PartitionPlan => {
      const m = i + 1;
      const n = stream.partitions;
      return {
        stream,
        m,
        n,
        params: n === 1 || params.length === 0 ? [...params] : [...params, [kind.partitionParam, `${m}/${n}`]],
        run: state.run,
        dir: partDir(stream.name, m, n, state.run),
      };
    });
  });
}
