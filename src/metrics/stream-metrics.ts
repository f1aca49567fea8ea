import { Counter, Gauge, type Registry } from 'prom-client';
import type { StreamProgress } from '../export/index.js';
import type { MetricsStream, RunFacts } from './run-facts.js';
import { PREFIX } from './run-wide-metrics.js';

/** Registers the per-stream metrics of `streams` (labels `export`, `stream`) in `registry`. */
export function defineStreamMetrics(registry: Registry, facts: RunFacts, streams: readonly MetricsStream[]): Registry {
  const registers = [registry];
  const labelsOf = (stream: MetricsStream) => ({ export: facts.exportLabel, stream: stream.name });
  const perFormat = (name: string, help: string, of: (file: { rows: number; bytes: number }) => number) =>
    new Counter({
      name: `${PREFIX}${name}`,
      help,
      labelNames: ['export', 'stream', 'format'],
      registers,
      collect: function (this: Counter) {
        this.reset();
        const written = facts.run?.written() ?? [];
        for (const stream of streams) {
          for (const format of stream.formats) {
            const files = written.filter((file) => file.stream === stream.name && file.format === format);
            this.inc({ ...labelsOf(stream), format }, files.reduce((sum, file) => sum + of(file), 0));
          }
        }
      },
    });
  perFormat('rows_written_total', 'Rows in the shards this run committed.', (file) => file.rows);
  perFormat('bytes_written_total', 'Bytes of the shards this run committed.', (file) => file.bytes);
  perFormat('files_written_total', 'Shards this run committed.', () => 1);
  new Counter({
    name: `${PREFIX}rows_read_total`,
    help: 'Rows this run read so far, written to open shards, committed or not.',
    labelNames: ['export', 'stream'],
    registers,
    collect: function (this: Counter) {
      this.reset();
      for (const stream of streams) this.inc(labelsOf(stream), facts.run?.rowsRead(stream.name) ?? 0);
    },
  });
  const perStream = (name: string, help: string, value: (progress: StreamProgress) => number) =>
    new Gauge({
      name: `${PREFIX}${name}`,
      help,
      labelNames: ['export', 'stream'],
      registers,
      collect: function (this: Gauge) {
        this.reset();
        const progress = facts.run?.streams() ?? [];
        for (const stream of streams) {
          const own = progress.find((p) => p.name === stream.name);
          if (own !== undefined) this.set(labelsOf(stream), value(own));
        }
      },
    });
  perStream('partitions', 'Partitions this run reads of the stream.', (progress) => progress.partitions);
  perStream('partitions_done', 'Partitions of the stream this run has read to the end.', (progress) => progress.done);
  new Gauge({
    name: `${PREFIX}data_end_timestamp_seconds`,
    help: 'Incremental and snapshot streams: the end of the last completed window (incremental) or the start of the last sealed snapshot, seconds since the epoch.',
    labelNames: ['export', 'stream'],
    registers,
    collect: function (this: Gauge) {
      this.reset();
      for (const stream of streams) {
        const end = stream.mode === 'full' ? undefined : facts.dataEnds.get(stream.name);
        if (end !== undefined) this.set(labelsOf(stream), end / 1000);
      }
    },
  });
  return registry;
}
