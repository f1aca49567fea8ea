#!/usr/bin/env node
// What parquet-wasm's writer settings cost and save on simulator events: the rows are put into
// Arrow columns once by the export's RowGroupBuilder (dist/), then each variant encodes them all
// into one Parquet file in memory (`writeParquet`), rounds interleaved, medians of CPU (the
// process's user + sys) and the file's size, both per 1M rows. `today` is the export's settings:
// zstd, delta encoding and no dictionary on the integer and time columns (src/sink/parquet/encode.ts).
//
//   npm run build && taskset -c 1 node bench/tools/encoding-variants.js [--rows 200000] [--rounds 3]
import { parseArgs } from 'node:util';
import { Table, tableToIPC } from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import { RowGroupBuilder } from '../../dist/sink/collections/row-group.js';
import { createDataset } from '../../dist/simulator/dataset/dataset.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '3' } } });
const rows = Number(values.rows);

const dataset = createDataset({ seed: 1, assets: 1000, events: rows });
const builder = new RowGroupBuilder('events', rows);
for (let i = 0; i < rows; i++) builder.addOne(dataset.events.item(i));
const ipc = tableToIPC(new Table(builder.batch()), 'stream');

const INTEGER_COLUMNS = ['id', 'startTime', 'endTime', 'dataSetId', 'createdTime', 'lastUpdatedTime'];

/** Writer properties: today's, changed as the variant says. */
function properties(variant) {
  let props = new wasm.WriterPropertiesBuilder()
    .setCompression(variant.codec ?? wasm.Compression.ZSTD)
    .setMaxRowGroupSize(100_000);
  for (const column of INTEGER_COLUMNS) {
    props = props
      .setColumnDictionaryEnabled(column, false)
      .setColumnEncoding(column, wasm.Encoding.DELTA_BINARY_PACKED);
  }
  if (variant.statistics !== undefined) props = props.setStatisticsEnabled(variant.statistics);
  if (variant.dictionary === false) props = props.setDictionaryEnabled(false);
  for (const column of variant.noDictionary ?? []) props = props.setColumnDictionaryEnabled(column, false);
  return props.build();
}

const VARIANTS = {
  'today (before issue 27)': {},
  'no dictionary on externalId (kept)': { noDictionary: ['externalId'] },
  'no dictionary on externalId and description': { noDictionary: ['externalId', 'description'] },
  'no dictionary at all': { dictionary: false },
  'statistics: chunk only': { statistics: wasm.EnabledStatistics.Chunk },
  'statistics: none': { statistics: wasm.EnabledStatistics.None },
  'snappy': { codec: wasm.Compression.SNAPPY },
  'lz4 raw': { codec: wasm.Compression.LZ4_RAW },
  'uncompressed': { codec: wasm.Compression.UNCOMPRESSED },
};

const samples = new Map();
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, variant] of Object.entries(VARIANTS)) {
    const before = process.cpuUsage();
    const file = wasm.writeParquet(wasm.Table.fromIPCStream(ipc), properties(variant));
    const used = process.cpuUsage(before);
    const perMillion = 1e6 / rows;
    const sample = { cpu: ((used.user + used.system) / 1e6) * perMillion, mb: (file.length / 1e6) * perMillion };
    samples.set(name, [...(samples.get(name) ?? []), sample]);
  }
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(`${rows.toLocaleString('en-US')} events, ${values.rounds} rounds (medians), one process`);
console.log('| Variant | CPU s per 1M rows | MB per 1M rows |');
console.log('|---|---|---|');
for (const [name, list] of samples) {
  console.log(`| ${name} | ${median(list.map((s) => s.cpu)).toFixed(2)} | ${median(list.map((s) => s.mb)).toFixed(1)} |`);
}
