#!/usr/bin/env node
// Would one live parquet-wasm writer per open shard fit in memory? Opens W streaming writers
// (`transformParquetStream`, the export's settings) in one thread and feeds them 4096-row batches
// of simulator events round-robin, as W partitions filling their shards at once would, until each
// has R rows; prints the wasm memory before the writers close, the process's RSS and CPU.
//
//   npm run build && taskset -c 1 node bench/tools/live-writers.js [--writers 10] [--rows 100000]
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Table, tableToIPC } from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import { RowGroupBuilder } from '../../dist/sink/collections/row-group.js';
import { createDataset } from '../../dist/simulator/dataset/dataset.js';

const { values } = parseArgs({ options: { writers: { type: 'string', default: '10' }, rows: { type: 'string', default: '100000' } } });
const BATCH = 4096;
const dataset = createDataset({ seed: 1, assets: 1000, events: 12 * BATCH });
const builder = new RowGroupBuilder('events', BATCH);
const batches = [];
for (let i = 0; i < 12 * BATCH; i++) {
  builder.addOne(dataset.events.item(i));
  if (builder.rows === BATCH) {
    batches.push(tableToIPC(new Table(builder.batch()), 'stream'));
    builder.reset();
  }
}

function properties() {
  let props = new wasm.WriterPropertiesBuilder().setCompression(wasm.Compression.ZSTD).setMaxRowGroupSize(100_000);
  for (const column of ['id', 'startTime', 'endTime', 'dataSetId', 'createdTime', 'lastUpdatedTime']) {
    props = props
      .setColumnDictionaryEnabled(column, false)
      .setColumnEncoding(column, wasm.Encoding.DELTA_BINARY_PACKED);
  }
  return props.setColumnDictionaryEnabled('externalId', false).build();
}

/** A streaming writer fed batch by batch: push(ipc), then push(null) to close it. */
function liveWriter(onBytes) {
  const queue = [];
  let wake;
  const input = new ReadableStream(
    {
      pull: async (controller) => {
        while (queue.length === 0) await new Promise((resolve) => (wake = resolve));
        const next = queue.shift();
        if (next === null) {
          controller.close();
          return;
        }
        const table = wasm.Table.fromIPCStream(next);
        for (const batch of table.recordBatches()) controller.enqueue(batch);
        table.free();
      },
    },
    { highWaterMark: 0 },
  );
  // The writer pulls its first batch before it answers: not awaited here.
  const output = wasm.transformParquetStream(input, properties());
  const done = (async () => {
    for await (const chunk of await output) onBytes(chunk.length);
  })();
  return {
    push: (ipc) => {
      queue.push(ipc);
      wake?.();
    },
    done,
  };
}

const started = process.cpuUsage();
let written = 0;
const writers = Array.from({ length: Number(values.writers) }, () => liveWriter((bytes) => (written += bytes)));
const rounds = Math.ceil(Number(values.rows) / BATCH);
for (let round = 0; round < rounds; round++) {
  for (const writer of writers) writer.push(batches[round % batches.length]);
  await sleep(5);
}
const open = wasm.wasmMemory().buffer.byteLength;
const rss = process.memoryUsage().rss;
for (const writer of writers) writer.push(null);
await Promise.all(writers.map((writer) => writer.done));
const used = process.cpuUsage(started);
const mb = (bytes) => Math.round(bytes / 1e6);
console.log(
  `${writers.length} writers x ${rounds * BATCH} rows: wasm memory ${mb(open)} MB with all open, RSS ${mb(rss)} MB, ` +
  `CPU ${((used.user + used.system) / 1e6).toFixed(2)} s, ${(written / 1e6).toFixed(1)} MB written`,
);
