import { dirname, resolve } from 'node:path';
import { formatByteSize } from '../config/byte-size.js';
import { describeMetrics } from '../config/metrics-schema.js';
import type { JobConfig } from '../config/load-config.js';
import { createPlatformClient } from '../connect/index.js';
import {
  dryRunLines,
  idleMessage,
  inspectRun,
  probeAccess,
  probeQueries,
  type StreamAction,
  type StreamInspection,
  type WorkerSpec,
} from '../export/index.js';
import { ConfigError } from '../errors.js';
import type { AccessError, AuthError, QueryRefusedError } from '../http/errors.js';
import type { Logger } from '../log.js';
import { missingFolders } from '../util/missing-folders.js';
import { authStatus } from './auth.js';
import { EXIT, exitCodeOf } from './exit-codes.js';

/**
 * `run --dry-run`: what a run would do and whether it would be refused, found as the run finds it
 * (drift, missing shards, a held lock, an unwritable output, a bucket it cannot write to), plus a
 * check of the credential. Changes nothing; of the data it asks only each stream's first request
 * for one item (a query the platform refuses is refused at once).
 */
export async function dryRun(
  config: JobConfig,
  options: { only: string | undefined; fresh: boolean; repair: boolean; worker: WorkerSpec | undefined },
  logger: Logger,
): Promise<number> {
  const now = new Date();
  const inspection = await inspectRun(config, options, logger, now.toISOString());
  const client = createPlatformClient(config.source, { configFile: config.file, logger, redactor: config.redactor });
  try {
    const status = await authStatus(client, config.source.auth);
    const lines = [
      `credential  ${status.mechanism}, user ${status.user || '(none)'}: ${status.works ? 'works' : 'REFUSED'} (${status.detail})`,
      `output      ${inspection.destination}`,
      `checkpoint  ${inspection.checkpointLocation}`,
    ];
    if (inspection.outputCredential !== undefined) lines.splice(2, 0, `output auth ${inspection.outputCredential}`);
    const metrics = describeMetrics(config.metrics, config.file, await textfileFolder(config.metrics?.textfile));
    if (metrics !== undefined) lines.push(`metrics     ${metrics}`);
    const { lock } = inspection;
    if (lock.state === 'held' && !lock.alive) {
      lines.push(`lock        left by a run that is gone (pid ${lock.owner?.pid ?? '?'} on ${lock.owner?.host ?? '?'}); a run takes it over`);
    }
    /**
     * What the platform refused that a run would be refused for too, before writing anything: the
     * project, a capability or the path (probeAccess), a view it does not have.
     */
    const access = await probeAccess(client, inspection.streams.map((s) => s.plan));
    const refused: (ConfigError | AccessError | AuthError | QueryRefusedError)[] = access === undefined ? [] : [access];
    // Each stream's query, unless the credential or the project was refused (then none can be asked).
    if (access === undefined && status.works) refused.push(...(await probeQueries(client, inspection.streams)));
    for (const stream of inspection.streams) {
      const { plan, request, action } = stream;
      const listed =
        request.method === 'POST'
          ? `POST ${request.path} ${shownBody(request.body)}`
          : `GET ${request.path}?${new URLSearchParams(request.params.map(([key, value]): [string, string] => [key, value])).toString()}`;
      const state = inspection.checkpoint?.streams[plan.name];
      const since = state === undefined || action.kind === 'fresh' ? null : (state.window?.from ?? null);
      const words = { listed, written: written(plan), since, action: (from?: string) => describe(action, from, now) };
      const described = await dryRunLines(client, stream, words);
      lines.push(...described.lines);
      // The project refused once is said once.
      const { refusal } = described;
      if (refusal !== undefined && (refusal instanceof ConfigError || access === undefined)) refused.push(refusal);
    }
    const { worker } = inspection;
    const held = formatByteSize(config.source.maxBufferedBytes);
    const inFlight = `at most ${config.source.concurrency} requests in flight and ${held} of responses held`;
    if (worker === undefined) {
      lines.push(`${inspection.chains} cursor ${inspection.chains === 1 ? 'chain' : 'chains'}; ${inFlight}.`);
    } else {
      const chains = worker.chains.map((c) => `${c.stream} ${c.partitions.join(',')}`).join('; ') || 'none: more workers than chains';
      lines.push(`worker ${worker.index}/${worker.count}: ${worker.mine} of ${worker.total} cursor chains (${chains}); ${inFlight} in this worker.`);
    }
    if (options.repair) {
      const damaged = [...inspection.damaged].map(([pair, problems]) => `\n  ${pair}: ${problems.join('; ')}`).join('');
      lines.push(damaged === '' ? 'repair      every shard matches the manifest; nothing to repair' : `repair      would read again:${damaged}`);
    }
    const refusals = [...inspection.refusals, ...refused];
    lines.push(...refusalLines(refusals));
    console.log(config.redactor.redact(lines.join('\n')));
    const [first] = refusals;
    if (first !== undefined) return exitCodeOf(first);
    return status.works ? EXIT.OK : EXIT.AUTH;
  } finally {
    await client.close();
  }
}

/** Codes of an output that refuses every request alike (the credential, a missing container): said once. */
const OUTPUT_WIDE = new Set(['E_OUTPUT_AUTH', 'E_OUTPUT_ACCESS']);

/**
 * One line a problem: the output's credential or absence, met by every request that asked, is said
 * once, with the count of the others (a problem is its code and the store's own: NoSuchBucket, AccessDenied).
 */
function refusalLines(refusals: readonly { code: string; message: string }[]): string[] {
  const said: { message: string; key: string | undefined }[] = [];
  const repeats = new Map<string, number>();
  for (const refusal of refusals) {
    const key = OUTPUT_WIDE.has(refusal.code) ? problemOf(refusal) : undefined;
    if (key !== undefined) {
      const seen = repeats.get(key);
      repeats.set(key, (seen ?? 0) + 1);
      if (seen !== undefined) continue;
    }
    said.push({ message: refusal.message, key });
  }
  return said.map(({ message, key }) => {
    const more = (key === undefined ? 1 : (repeats.get(key) ?? 1)) - 1;
    const others = more === 0 ? '' : ` (and ${more} more ${more === 1 ? 'request' : 'requests'} to the output refused the same way)`;
    return `REFUSED     a run now would stop here: ${message}${others}`;
  });
}

/** What an output's refusal is refused for: its code and the store's code of it (s3Code, Azure's). */
function problemOf(refusal: { code: string }): string {
  const { s3Code, failure } = refusal as { s3Code?: unknown; failure?: { azureCode?: unknown } };
  const store = typeof s3Code === 'string' ? s3Code : typeof failure?.azureCode === 'string' ? failure.azureCode : '';
  return `${refusal.code} ${store}`;
}

/** Said of a textfile whose folder does not exist yet: the run creates it. */
async function textfileFolder(textfile: string | undefined): Promise<string> {
  if (textfile === undefined) return '';
  const [outermost] = await missingFolders(dirname(resolve(textfile)));
  return outermost === undefined ? '' : `; ${outermost} does not exist: the run creates it (mode 0755)`;
}

function describe(action: StreamAction, from = 'the first page', now: Date): string {
  // A new run's folder is named by the run's start, not this dry run's (runId's format).
  const folder = (run: string) => (run === now.toISOString().replace(/[-:]/g, '') ? "<the run's start time>" : run);
  const run = 'run' in action && action.run !== null ? ` (run=${folder(action.run)})` : '';
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
      return `starts${run} from ${from}`;
  }
}

/** A request body as JSON, each list of more than 10 entries cut to its first 5 and a count (5000 asset ids). */
function shownBody(body: unknown): string {
  return JSON.stringify(body, (_key, value: unknown) =>
    Array.isArray(value) && value.length > 10 ? [...(value as unknown[]).slice(0, 5), `... ${value.length - 5} more`] : value,
  );
}

/** What a stream's runs write: its formats and mode, and whether its folder is a Delta table. */
function written(plan: StreamInspection['plan']): string {
  return `${plan.formats.join(' + ')}, ${plan.mode}${plan.table === 'delta' ? ', a Delta table (one version per completed run)' : ''}`;
}
