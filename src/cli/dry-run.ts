import { formatByteSize } from '../config/byte-size.js';
import { describeMetrics } from '../config/metrics-schema.js';
import type { JobConfig } from '../config/load-config.js';
import { createPlatformClient } from '../connect/index.js';
import { idleMessage, inspectRun, type StreamAction, type WorkerSpec } from '../export/index.js';
import type { Logger } from '../log.js';
import { authStatus } from './auth.js';
import { EXIT, exitCodeOf } from './exit-codes.js';

/**
 * `run --dry-run`: what a run would do and whether it would be refused, found as the run finds it
 * (drift, missing shards, a held lock, an unwritable output, a bucket it cannot write to), plus a
 * check of the credential. Changes nothing and lists nothing.
 */
export async function dryRun(
  config: JobConfig,
  options: { only: string | undefined; fresh: boolean; repair: boolean; worker: WorkerSpec | undefined },
  logger: Logger,
): Promise<number> {
  const inspection = await inspectRun(config, options, logger, new Date().toISOString());
  const client = createPlatformClient(config.source, { configFile: config.file, logger });
  try {
    const status = await authStatus(client, config.source.auth);
    const lines = [
      `credential  ${status.mechanism}, user ${status.user || '(none)'}: ${status.works ? 'works' : 'REFUSED'} (${status.detail})`,
      `output      ${inspection.destination}`,
      `checkpoint  ${inspection.checkpointLocation}`,
    ];
    const metrics = describeMetrics(config.metrics, config.file);
    if (metrics !== undefined) lines.push(`metrics     ${metrics}`);
    const { lock } = inspection;
    if (lock.state === 'held' && !lock.alive) {
      lines.push(`lock        left by a run that is gone (pid ${lock.owner?.pid ?? '?'} on ${lock.owner?.host ?? '?'}); a run takes it over`);
    }
    for (const { plan, request, action } of inspection.streams) {
      const listed =
        request.method === 'POST'
          ? `POST ${request.path} ${JSON.stringify(request.body)}`
          : `GET ${request.path}?${new URLSearchParams(request.params.map(([key, value]): [string, string] => [key, value])).toString()}`;
      lines.push(
        `stream ${plan.name}: ${listed} in ${plan.partitions} partition(s) -> ${plan.formats.join(' + ')}, ${plan.mode}`,
        `  ${describe(action)}`,
      );
    }
    const { worker } = inspection;
    const held = formatByteSize(config.source.maxBufferedBytes);
    const inFlight = `at most ${config.source.concurrency} requests in flight and ${held} of responses held`;
    if (worker === undefined) {
      lines.push(`${inspection.chains} cursor chains; ${inFlight}.`);
    } else {
      const chains = worker.chains.map((c) => `${c.stream} ${c.partitions.join(',')}`).join('; ') || 'none: more workers than chains';
      lines.push(`worker ${worker.index}/${worker.count}: ${worker.mine} of ${worker.total} cursor chains (${chains}); ${inFlight} in this worker.`);
    }
    if (options.repair) {
      const damaged = [...inspection.damaged].map(([pair, problems]) => `\n  ${pair}: ${problems.join('; ')}`).join('');
      lines.push(damaged === '' ? 'repair      every shard matches the manifest; nothing to repair' : `repair      would read again:${damaged}`);
    }
    for (const refusal of inspection.refusals) lines.push(`REFUSED     a run now would stop here: ${refusal.message}`);
    console.log(config.redactor.redact(lines.join('\n')));
    const [first] = inspection.refusals;
    if (first !== undefined) return exitCodeOf(first);
    return status.works ? EXIT.OK : EXIT.AUTH;
  } finally {
    await client.close();
  }
}

function describe(action: StreamAction): string {
  const run = 'run' in action && action.run !== null ? ` (run=${action.run})` : '';
  switch (action.kind) {
    case 'fresh':
      return 'starts over from the first page (--fresh deletes its earlier output)';
    case 'idle':
      return idleMessage(action.idle);
    case 'new':
      return 'a new export';
    case 'complete':
      return `complete; a run re-seals it${run}`;
    case 'resume':
      return `resumes${run}: ${action.done} of ${action.partitions} partitions done`;
    case 'start':
      return `starts${run} from the first page`;
  }
}
