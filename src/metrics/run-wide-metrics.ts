import { Counter, Gauge, type Registry } from 'prom-client';
import type { StatusClass } from '../http/platform-client.js';
import { VERSION } from '../version.js';
import type { RunFacts } from './run-facts.js';

export const PREFIX = 'bulk_extract_';
const STATUS_CLASSES: readonly StatusClass[] = ['2xx', '3xx', '4xx', '5xx', 'none'];

/** Registers the run-wide metrics (label `export`, no `stream`) in `registry`, read from `facts`. */
export function defineRunWideMetrics(registry: Registry, facts: RunFacts): void {
  const label = { export: facts.exportLabel };
  const registers = [registry];
  const client = () => facts.run?.client;
  new Counter({
    name: `${PREFIX}requests_total`,
    help: 'Requests to the platform that reached it, by the class of their answer (none: no answer came).',
    labelNames: ['export', 'status_class'],
    registers,
    collect() {
      this.reset();
      const answers: Partial<Record<StatusClass, number>> = client()?.stats.answers ?? {};
      for (const cls of STATUS_CLASSES) this.inc({ ...label, status_class: cls }, answers[cls] ?? 0);
    },
  });
  const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
  runWide('counter', 'retries_total', 'Requests sent again after a retryable failure.', () => client()?.stats.retries ?? 0);
  runWide('counter', 'throttled_total', 'Answers that were HTTP 429 (also counted in requests_total).', () => client()?.stats.throttled ?? 0);
  runWide('counter', 'response_bytes_read_total', 'Bytes of the platform\'s answers read so far (bodies as decoded, every status).', () =>
    client()?.stats.responseBytes ?? 0,
  );
  runWide('gauge', 'limiter_concurrency', 'Requests the adaptive limiter lets be in flight at once now.', () => client()?.limiterState()?.concurrency);
  runWide('gauge', 'limiter_rate_per_second', 'Request starts per second the adaptive limiter allows now; 0 while unpaced.', () => {
    const state = client()?.limiterState();
    return state === undefined ? undefined : (state.ratePerSecond ?? 0);
  });
  runWide('gauge', 'pages_in_flight', 'Pages asked for or held in memory, not yet written.', () => facts.run?.budget.pages);
  runWide('gauge', 'buffered_bytes', 'Response bytes held in memory now (source.maxBufferedBytes bounds them).', () => facts.run?.budget.held);
  runWide('gauge', 'run_start_timestamp_seconds', 'When this run started, seconds since the epoch.', () => seconds(facts.startedAtMs));
  runWide(
    'gauge',
    'run_deadline_timestamp_seconds',
    'When this run should have ended at the latest (its start plus metrics.runDeadline), seconds since the epoch.',
    () => seconds(facts.deadlineMs),
  );
  runWide(
    'gauge',
    'run_end_timestamp_seconds',
    'When the last run that ended did, seconds since the epoch: the run before this one while it lasts, this one once it ended. A start newer than it is a run going on, or one that died or hangs.',
    () => seconds(facts.last.lastEndMs),
  );
  runWide('gauge', 'run_duration_seconds', 'How long this run has lasted, or lasted once it ended.', () =>
    ((facts.endedAtMs ?? facts.now()) - facts.startedAtMs) / 1000,
  );
  runWide('gauge', 'last_success_timestamp_seconds', 'When the last run that exited 0 ended, seconds since the epoch.', () =>
    seconds(facts.last.lastSuccessMs),
  );
  runWide('gauge', 'last_run_exit_code', 'Exit code of the last run that ended (0 complete, 1 failed, 2 usage, 3 auth, 130 interrupted).', () =>
    facts.last.lastExitCode,
  );
  new Gauge({
    name: `${PREFIX}last_run_info`,
    help: 'Always 1: the stable code of the error the last run that ended stopped with, in `code` (none: it had none).',
    labelNames: ['export', 'code'],
    registers,
    collect() {
      this.reset();
      const { lastCode, lastExitCode } = facts.last;
      // Before any run ended there is no last run to describe.
      if (lastCode !== undefined || lastExitCode !== undefined) this.set({ ...label, code: lastCode ?? 'none' }, 1);
    },
  });
  const build = new Gauge({
    name: `${PREFIX}build_info`,
    help: 'Always 1: the version of bulk-extract and of Node.js that run the export.',
    labelNames: ['export', 'version', 'node_version'],
    registers,
  });
  build.set({ ...label, version: VERSION, node_version: process.version }, 1);

  /** A run-wide metric whose value is read at each collection; none while `value` has none. */
  function runWide(kind: 'counter' | 'gauge', name: string, help: string, value: () => number | undefined): void {
    const configuration = {
      name: `${PREFIX}${name}`,
      help,
      labelNames: ['export'] as const,
      registers,
      // After reset() a metric holds no value, so inc() sets it, for a counter as for a gauge.
      collect(this: Counter<'export'> | Gauge<'export'>) {
        this.reset();
        const current = value();
        if (current !== undefined) this.inc(label, current);
      },
    };
    if (kind === 'counter') new Counter(configuration);
    else new Gauge(configuration);
  }
}
