#!/usr/bin/env node
// Measures Parquet writers for the events profile of DESIGN.md ("Parquet profile"), so the project
// can choose its writer by measurement. Every candidate writes ONE file of all rows, row groups of
// 100k rows streamed into the file as they fill, and runs in its own child process (pinned to one
// core with taskset when available) so that its peak RSS is its own. The parent then reads every
// file back with DuckDB and checks row count, sums, string bytes and column types.
//
// Input, the same for every candidate: the parent generates the events once with the simulator's
// data generator and stores them as page bodies, exactly as the platform serves them
// ({"items":[...1000 events],"nextCursor":"..."}), in a temp file. Inside the measured window each
// candidate reads a page's bytes (from the page cache, as a socket would hand them over), decodes
// them with JSON.parse and writes the items: the timed work is what the worker does per page. The
// `parse-only` row is that input floor alone.
//
// Candidates: Arrow columns filled by hand (typed arrays) or through apache-arrow's Builders, then
// parquet-wasm; hyparquet-writer's ParquetWriter; plain NDJSON as the baseline. Variants: another
// codec (-snappy, -gzip) and -delta (DELTA_BINARY_PACKED ids and times, DELTA_BYTE_ARRAY externalId,
// no dictionary for them). bulk-extract-sink is the export's own ParquetShardWriter (spill file, encoder
// thread); bulk-extract-sink-delta-table the same writer for a Delta table stream (its timestamps in
// microseconds, the file's add stats gathered). Output: one JSON line per candidate, then one line of
// ratios to ndjson.
//
//   npm run build && node bench/parquet-writers.js [--rows 1000000] [--candidates a,b] [--keep]
//   node bench/parquet-writers.js --only NAME --rows N --dir DIR   (child mode, used by the parent)
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync, zstdCompressSync } from 'node:zlib';

const { values: args } = parseArgs({
  options: {
    'rows': { type: 'string', default: '1000000' },
    'page-size': { type: 'string', default: '1000' },
    'row-group': { type: 'string', default: '100000' },
    'only': { type: 'string' },
    'candidates': { type: 'string' },
    'dir': { type: 'string', default: join(tmpdir(), 'bulk-extract-bench-parquet') },
    'keep': { type: 'boolean', default: false },
  },
});
const ROWS = Number(args.rows);
const PAGE = Number(args['page-size']);
const ROW_GROUP = Number(args['row-group']);
const DIR = args.dir;
const SEED = 1;
const ASSETS = 10_000;

/** The event fields the profile names; anything else goes, as JSON, into the `extra` column. */
const KNOWN = new Set([
  'id', 'externalId', 'type', 'subtype', 'description', 'startTime', 'endTime', 'assetIds', 'source',
  'dataSetId', 'metadata', 'createdTime', 'lastUpdatedTime',
]);

/** JSON of the item's unknown fields, or null: no field is ever dropped. Same code for every writer. */
function extraOf(item) {
  let extra;
  for (const key in item) {
    if (!KNOWN.has(key)) (extra ??= {})[key] = item[key];
  }
  return extra === undefined ? null : JSON.stringify(extra);
}

/** name -> { run(pages, outPath) => { codec, extra }, ext: output extension (null: no file) }. */
const CANDIDATES = {
  'parse-only': { run: runParseOnly, ext: null },
  'ndjson': { run: runNdjson, ext: 'ndjson' },
  'bulk-extract-sink': { run: (pages, out) => runSink(pages, out, 'files'), ext: 'parquet' },
  // The same shard as a Delta table's data file: timestamps in microseconds, the add stats gathered.
  'bulk-extract-sink-delta-table': { run: (pages, out) => runSink(pages, out, 'delta'), ext: 'parquet' },
  'arrow-hand+parquet-wasm': { run: (pages, out) => runArrowParquetWasm(pages, out, 'hand', 'ZSTD'), ext: 'parquet' },
  'arrow-hand+parquet-wasm-snappy': {
    run: (pages, out) => runArrowParquetWasm(pages, out, 'hand', 'SNAPPY'), ext: 'parquet',
  },
  // Same data, writer tuned for these columns: no dictionary attempt on ids and times (near-unique),
  // DELTA_BINARY_PACKED for them and DELTA_BYTE_ARRAY for the sequential externalId.
  'arrow-hand+parquet-wasm-delta': {
    run: (pages, out) => runArrowParquetWasm(pages, out, 'hand', 'ZSTD', true), ext: 'parquet',
  },
  'arrow-builders+parquet-wasm': {
    run: (pages, out) => runArrowParquetWasm(pages, out, 'builders', 'ZSTD'), ext: 'parquet',
  },
  'hyparquet-writer': { run: (pages, out) => runHyparquet(pages, out, 'SNAPPY'), ext: 'parquet' },
  'hyparquet-writer-delta': { run: (pages, out) => runHyparquet(pages, out, 'SNAPPY', true), ext: 'parquet' },
  'hyparquet-writer-gzip': { run: (pages, out) => runHyparquet(pages, out, 'GZIP'), ext: 'parquet' },
  'hyparquet-writer-zstd': { run: (pages, out) => runHyparquet(pages, out, 'ZSTD'), ext: 'parquet' },
};

// ---------------------------------------------------------------------------------------------
// Parent: generate the pages once, run each candidate in its own process, validate with DuckDB.
// ---------------------------------------------------------------------------------------------

async function parent() {
  if (!existsSync(new URL('../dist/simulator/index.js', import.meta.url))) {
    throw new Error('dist/ is missing: run `npm run build` first');
  }
  mkdirSync(DIR, { recursive: true });
  const expected = await generatePages();
  const names = args.candidates?.split(',') ?? Object.keys(CANDIDATES);
  const pin = spawnSync('taskset', ['-c', '1', 'true']).status === 0 ? ['taskset', '-c', '1'] : [];
  const results = [];
  for (const name of names) {
    if (!CANDIDATES[name]) throw new Error(`unknown candidate ${name}`);
    const command = [...pin, process.execPath, new URL(import.meta.url).pathname, '--only', name,
      '--rows', String(ROWS), '--page-size', String(PAGE), '--row-group', String(ROW_GROUP), '--dir', DIR];
    const run = spawnSync(command[0], command.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (run.status !== 0) {
      const failed = { name, rows: ROWS, error: `exit ${run.status}`, stdout: run.stdout.trim().slice(-500) };
      console.log(JSON.stringify(failed));
      results.push(failed);
      continue;
    }
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1));
    if (result.file) {
      Object.assign(result, await validate(result.file, CANDIDATES[name].ext, expected));
      if (!args.keep) rmSync(result.file);
    }
    delete result.file;
    console.log(JSON.stringify(result));
    results.push(result);
  }
  const ndjson = results.find((r) => r.name === 'ndjson');
  if (ndjson?.rowsPerSecond) {
    console.log(JSON.stringify({
      ratiosVsNdjson: Object.fromEntries(results.filter((r) => r.rowsPerSecond).map((r) => [r.name, {
        throughput: Number((r.rowsPerSecond / ndjson.rowsPerSecond).toFixed(2)),
        fileBytes: r.fileBytes ? Number((r.fileBytes / ndjson.fileBytes).toFixed(3)) : null,
      }])),
    }));
  }
  if (!args.keep) {
    rmSync(join(DIR, `pages-${ROWS}.json`));
    rmSync(join(DIR, `pages-${ROWS}.json.offsets`));
  }
}

/** Writes the page bodies and returns the aggregates every output file must reproduce. */
async function generatePages() {
  const { createDataset } = await import('../dist/simulator/index.js');
  const ds = createDataset({ seed: SEED, assets: ASSETS, events: ROWS });
  const path = join(DIR, `pages-${ROWS}.json`);
  const fd = openSync(path, 'w');
  const offsets = [0];
  let position = 0;
  const e = {
    rows: ROWS, sumId: 0n, sumStartTime: 0n, sumEndTime: 0n, endTimeCount: 0, subtypeCount: 0, descriptionCount: 0,
    dataSetIdCount: 0, assetIdCount: 0, sumAssetIds: 0n, metadataCount: 0, metadataEntries: 0,
    metadataBytes: 0, stringBytes: 0,
  };
  for (let start = 0; start < ROWS; start += PAGE) {
    const items = [];
    for (let i = start; i < Math.min(start + PAGE, ROWS); i++) {
      const event = ds.events.item(i);
      items.push(event);
      e.sumId += BigInt(event.id);
      e.sumStartTime += BigInt(event.startTime);
      if (event.endTime !== undefined) {
        e.endTimeCount++;
        e.sumEndTime += BigInt(event.endTime);
      }
      if (event.subtype !== undefined) e.subtypeCount++;
      if (event.description !== undefined) e.descriptionCount++;
      if (event.dataSetId !== undefined) e.dataSetIdCount++;
      e.assetIdCount += (event.assetIds ?? []).length;
      for (const id of event.assetIds ?? []) e.sumAssetIds += BigInt(id);
      if (event.metadata !== undefined) {
        e.metadataCount++;
        for (const [k, v] of Object.entries(event.metadata)) {
          e.metadataEntries++;
          e.metadataBytes += Buffer.byteLength(k) + Buffer.byteLength(v);
        }
      }
      e.stringBytes += Buffer.byteLength(event.externalId) + Buffer.byteLength(event.type) +
        Buffer.byteLength(event.source) + (event.description ? Buffer.byteLength(event.description) : 0);
    }
    const body = { items };
    if (start + PAGE < ROWS) body.nextCursor = Buffer.from(`opaque:${start + PAGE}`).toString('base64url');
    const bytes = Buffer.from(JSON.stringify(body));
    writeSync(fd, bytes);
    position += bytes.length;
    offsets.push(position);
  }
  closeSync(fd);
  writeFileSync(`${path}.offsets`, JSON.stringify(offsets));
  return e;
}

const EXPECTED_TYPES = {
  id: 'BIGINT', externalId: 'VARCHAR', type: 'VARCHAR', subtype: 'VARCHAR', description: 'VARCHAR',
  startTime: 'TIMESTAMP WITH TIME ZONE', endTime: 'TIMESTAMP WITH TIME ZONE', assetIds: 'BIGINT[]',
  source: 'VARCHAR', dataSetId: 'BIGINT', metadata: 'MAP(VARCHAR, VARCHAR)',
  createdTime: 'TIMESTAMP WITH TIME ZONE', lastUpdatedTime: 'TIMESTAMP WITH TIME ZONE', extra: 'VARCHAR',
};

/** Reads the file back with DuckDB: counts, sums, string bytes, column types, row groups, codecs. */
async function validate(file, ext, e) {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const query = async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJson();
  const problems = [];
  try {
    const source = ext === 'parquet' ? `read_parquet('${file}')` : `read_json('${file}', format = 'newline_delimited')`;
    const types = Object.fromEntries(
      (await query(`DESCRIBE SELECT * FROM ${source}`)).map((r) => [r.column_name, r.column_type]),
    );
    if (ext !== 'parquet') {
      const [r] = await query(`SELECT count(*)::VARCHAR AS n, sum(id)::VARCHAR AS s FROM ${source}`);
      if (r.n !== String(e.rows)) problems.push(`count ${r.n} != ${e.rows}`);
      if (r.s !== String(e.sumId)) problems.push(`sum(id) ${r.s} != ${e.sumId}`);
      return { duckdbOk: problems.length === 0, duckdbProblems: problems, duckdbTypes: types };
    }
    for (const [column, type] of Object.entries(EXPECTED_TYPES)) {
      if (types[column] !== type) problems.push(`${column}: ${types[column] ?? 'missing'} (want ${type})`);
    }
    const [r] = await query(`SELECT
      count(*)::VARCHAR AS rows, sum(id)::VARCHAR AS sumId,
      sum(epoch_ms(startTime))::VARCHAR AS sumStartTime, sum(epoch_ms(endTime))::VARCHAR AS sumEndTime,
      count(endTime)::VARCHAR AS endTimeCount, count(subtype)::VARCHAR AS subtypeCount,
      count(description)::VARCHAR AS descriptionCount, count(dataSetId)::VARCHAR AS dataSetIdCount,
      sum(len(assetIds))::VARCHAR AS assetIdCount, sum(list_sum(assetIds)::HUGEINT)::VARCHAR AS sumAssetIds,
      count(metadata)::VARCHAR AS metadataCount, sum(cardinality(metadata))::VARCHAR AS metadataEntries,
      sum(list_sum(list_transform(map_keys(metadata), (k) -> strlen(k))) +
          list_sum(list_transform(map_values(metadata), (v) -> strlen(v))))::VARCHAR AS metadataBytes,
      sum(strlen(externalId) + strlen(type) + strlen(source) + coalesce(strlen(description), 0))::VARCHAR
        AS stringBytes,
      count(extra)::VARCHAR AS extraCount
      FROM ${source}`);
    for (const [key, want] of Object.entries({ ...e, extraCount: 0 })) {
      if (r[key] !== String(want)) problems.push(`${key} ${r[key]} != ${want}`);
    }
    const [meta] = await query(`SELECT count(DISTINCT row_group_id)::INTEGER AS rowGroups,
      list(DISTINCT compression ORDER BY compression) AS codecs,
      max(row_group_num_rows)::INTEGER AS maxRowGroupRows FROM parquet_metadata('${file}')`);
    const schema = await query(`SELECT name, type, logical_type FROM parquet_schema('${file}')`);
    for (const s of schema) {
      if (s.type === 'INT96') problems.push(`${s.name} is INT96`);
      if (/isSigned=(0|false)|NANOS=[^<]/.test(s.logical_type ?? '')) problems.push(`${s.name}: ${s.logical_type}`);
    }
    if (meta.maxRowGroupRows > ROW_GROUP) problems.push(`row group of ${meta.maxRowGroupRows} rows`);
    return {
      duckdbOk: problems.length === 0, duckdbProblems: problems, duckdbTypes: types,
      rowGroups: meta.rowGroups, fileCodecs: meta.codecs,
    };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

// ---------------------------------------------------------------------------------------------
// Child: one candidate, one file, timed from the first page to the closed file.
// ---------------------------------------------------------------------------------------------

async function child(name) {
  const candidate = CANDIDATES[name];
  if (!candidate) throw new Error(`unknown candidate ${name}`);
  const path = join(DIR, `pages-${ROWS}.json`);
  const offsets = JSON.parse(readFileSync(`${path}.offsets`, 'utf8'));
  const out = candidate.ext ? join(DIR, `${name}-${ROWS}.${candidate.ext}`) : null;
  await prepare(name);
  const fd = openSync(path, 'r');
  let buffer = Buffer.alloc(1 << 20);
  /** Page after page: the bytes as a socket would deliver them, then JSON.parse, as the worker does. */
  function* pages() {
    for (let p = 0; p + 1 < offsets.length; p++) {
      const length = offsets[p + 1] - offsets[p];
      if (length > buffer.length) buffer = Buffer.alloc(length * 2);
      readSync(fd, buffer, 0, length, offsets[p]);
      yield JSON.parse(buffer.toString('utf8', 0, length)).items;
    }
  }
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const info = await candidate.run(pages(), out);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  closeSync(fd);
  const usage = process.resourceUsage();
  console.log(JSON.stringify({
    name,
    rows: ROWS,
    seconds: Number(seconds.toFixed(2)),
    rowsPerSecond: Math.round(ROWS / seconds),
    fileBytes: out ? statSync(out).size : null,
    maxRssMB: Math.round(usage.maxRSS / 1024),
    cpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
    codec: info.codec,
    ...info.extra,
    file: out,
  }));
}

const modules = {};
/** Loads the writer's modules (and instantiates wasm) outside the timed window. */
async function prepare(name) {
  if (name.includes('parquet-wasm') || name.startsWith('bulk-extract-sink')) await loadArrowWasm();
  if (name.startsWith('hyparquet')) modules.hyparquet = await import('hyparquet-writer');
}
async function loadArrowWasm() {
  modules.arrow = await import('apache-arrow');
  // The node build of parquet-wasm instantiates its wasm synchronously on import; no init call.
  modules.wasm = await import('parquet-wasm');
  modules.sink = await import('../dist/sink/collections/row-group.js');
  modules.writer = await import('../dist/sink/parquet/parquet-writer.js');
  const { EncoderPool } = await import('../dist/sink/parquet/encoder-pool.js');
  const { BytesPerRow } = await import('../dist/sink/parquet/bytes-per-row.js');
  // What a shard sink hands its writers; its idle encoder thread does not keep the process alive.
  modules.parquetDeps = { encoders: new EncoderPool(), bytesPerRow: new BytesPerRow(), merges: (await import('p-limit')).default(1) };
}

// --- parse-only: the input floor ---------------------------------------------------------------

function runParseOnly(pages) {
  let rows = 0;
  for (const items of pages) rows += items.length;
  if (rows !== ROWS) throw new Error(`read ${rows} rows`);
  return { codec: null };
}

// --- ndjson ------------------------------------------------------------------------------------

async function runNdjson(pages, out) {
  const file = await open(out, 'w');
  for (const items of pages) {
    let text = '';
    for (const item of items) text += `${JSON.stringify(item)}\n`;
    await file.write(text);
  }
  await file.close();
  return { codec: 'none' };
}

// --- Arrow (by hand or Builders) -> IPC -> parquet-wasm -> one file ------------------------------

/** The Arrow schema of the events profile: the production one (src/sink/collections/row-group.ts). */
function arrowEventSchema() {
  return modules.sink.arrowSchema('events');
}

async function runArrowParquetWasm(pages, out, fill, codec, delta = false) {
  const { arrow: a, wasm } = modules;
  const schema = arrowEventSchema();
  const batches = fill === 'hand' ? handBatches(pages) : builderBatches(pages, schema);
  let rowGroups = 0;
  // A pull source: the wasm writer asks for the next RecordBatch when it is ready for one, so the
  // producer never runs ahead of the writer (backpressure) and at most one row group is in flight.
  const input = new ReadableStream({
    pull(controller) {
      const next = batches.next();
      if (next.done) {
        controller.close();
        return;
      }
      const ipc = a.tableToIPC(new a.Table(next.value), 'stream');
      const table = wasm.Table.fromIPCStream(ipc);
      const [batch] = table.recordBatches();
      table.free();
      // transformParquetStream takes ownership of each enqueued RecordBatch (it unwraps the pointer),
      // so the batch needs no free() of its own; the Table it came from does.
      controller.enqueue(batch);
      rowGroups++;
    },
  }, { highWaterMark: 0 });
  let builder = new wasm.WriterPropertiesBuilder()
    .setCompression(wasm.Compression[codec])
    .setMaxRowGroupSize(ROW_GROUP)
    .setCreatedBy('bulk-extract bench');
  if (delta) {
    // Column paths here are top-level names only (a String becomes a one-part ColumnPath).
    for (const [column, encoding] of Object.entries(DELTA_ENCODINGS)) {
      builder = builder.setColumnDictionaryEnabled(column, false).setColumnEncoding(column, wasm.Encoding[encoding]);
    }
  }
  const properties = builder.build();
  // Resolves once the first batch has been pulled (the writer needs its schema); with a pull source
  // awaiting it here is safe. With a push source, enqueue the first batch before awaiting.
  const output = await wasm.transformParquetStream(input, properties);
  const file = await open(out, 'w');
  let chunks = 0;
  for await (const chunk of output) {
    await file.write(chunk);
    chunks++;
  }
  await file.close();
  return {
    codec: codec === 'ZSTD' ? 'zstd (parquet-rs default level; no level setter in JS)' : 'snappy',
    extra: {
      batches: rowGroups,
      outputChunks: chunks,
      // wasm linear memory only grows: this is its high-water mark, part of maxRssMB.
      wasmMemoryMB: Math.round(wasm.wasmMemory().buffer.byteLength / 2 ** 20),
    },
  };
}

/** Batches of ROW_GROUP rows from whole pages, through apache-arrow's Builders. */
function* builderBatches(pages, schema) {
  const a = modules.arrow;
  const builder = a.makeBuilder({ type: new a.Struct(schema.fields), nullValues: [null, undefined] });
  let rows = 0;
  for (const items of pages) {
    for (const item of items) {
      builder.append({
        id: BigInt(item.id),
        externalId: item.externalId,
        type: item.type,
        subtype: item.subtype,
        description: item.description,
        startTime: item.startTime,
        endTime: item.endTime,
        assetIds: (item.assetIds ?? []).map((v) => BigInt(v)),
        source: item.source,
        dataSetId: item.dataSetId === undefined || item.dataSetId === null ? null : BigInt(item.dataSetId),
        metadata: item.metadata,
        createdTime: item.createdTime,
        lastUpdatedTime: item.lastUpdatedTime,
        extra: extraOf(item),
      });
    }
    rows += items.length;
    if (rows >= ROW_GROUP) {
      yield new a.RecordBatch(schema, builder.flush());
      rows = 0;
    }
  }
  if (rows > 0) yield new a.RecordBatch(schema, builder.flush());
  builder.finish();
}

/**
 * Batches of ROW_GROUP rows from whole pages, Arrow buffers filled by hand: the production
 * RowGroupBuilder (src/sink/collections/row-group.ts), so this measures the code that ships. A batch views
 * the reused buffers, so the consumer serializes it (tableToIPC) before asking for the next one.
 */
function* handBatches(pages) {
  const builder = new modules.sink.RowGroupBuilder('events', ROW_GROUP + PAGE);
  for (const items of pages) {
    builder.add(items);
    // Row groups close at a page boundary, as shards do.
    if (builder.rows >= ROW_GROUP) {
      yield builder.batch();
      builder.reset();
    }
  }
  if (builder.rows > 0) yield builder.batch();
}

/** The production sink itself (src/sink/parquet/parquet-writer.ts): zstd, delta on integer columns. */
async function runSink(pages, out, table) {
  const writer = await modules.writer.ParquetShardWriter.create(
    out,
    'events',
    { compression: 'zstd', rowGroupRows: ROW_GROUP },
    modules.parquetDeps,
    { table },
  );
  for (const items of pages) await writer.append(items);
  const { deltaStats } = await writer.commit();
  return {
    codec: 'zstd + DELTA_BINARY_PACKED on integer and time columns (bulk-extract sink)',
    extra: { table, ...(deltaStats === undefined ? {} : { deltaStatsBytes: deltaStats.length }) },
  };
}

// --- hyparquet-writer: ParquetWriter, one row group per write() ---------------------------------

/** Parquet schema elements of the events profile (hyparquet takes the Thrift SchemaElement list). */
function hyparquetSchema() {
  const utc = { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' };
  const ts = (name, repetition_type) => ({
    name, type: 'INT64', repetition_type, converted_type: 'TIMESTAMP_MILLIS', logical_type: utc,
  });
  const str = (name, repetition_type) => ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type });
  return [
    { name: 'root', num_children: 14 },
    { name: 'id', type: 'INT64', repetition_type: 'REQUIRED' },
    str('externalId', 'REQUIRED'),
    str('type', 'REQUIRED'),
    str('subtype', 'OPTIONAL'),
    str('description', 'OPTIONAL'),
    ts('startTime', 'REQUIRED'),
    ts('endTime', 'OPTIONAL'),
    { name: 'assetIds', repetition_type: 'REQUIRED', converted_type: 'LIST', logical_type: { type: 'LIST' }, num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', type: 'INT64', repetition_type: 'REQUIRED' },
    str('source', 'REQUIRED'),
    { name: 'dataSetId', type: 'INT64', repetition_type: 'OPTIONAL' },
    { name: 'metadata', repetition_type: 'OPTIONAL', converted_type: 'MAP', logical_type: { type: 'MAP' }, num_children: 1 },
    { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 },
    str('key', 'REQUIRED'),
    str('value', 'OPTIONAL'),
    ts('createdTime', 'REQUIRED'),
    ts('lastUpdatedTime', 'REQUIRED'),
    str('extra', 'OPTIONAL'),
  ];
}

/** The per-column encodings of the `-delta` variants (ids and times near-unique, externalId sequential). */
const DELTA_ENCODINGS = {
  id: 'DELTA_BINARY_PACKED', startTime: 'DELTA_BINARY_PACKED', endTime: 'DELTA_BINARY_PACKED',
  createdTime: 'DELTA_BINARY_PACKED', lastUpdatedTime: 'DELTA_BINARY_PACKED', externalId: 'DELTA_BYTE_ARRAY',
};

async function runHyparquet(pages, out, codec, delta = false) {
  const { ParquetWriter, fileWriter } = modules.hyparquet;
  // fileWriter: a ByteWriter that appends to the file (writeFileSync, flag 'a') whenever more than
  // 1 MB is buffered, so the file grows row group by row group; finish() writes the footer.
  const writer = new ParquetWriter({
    writer: fileWriter(out),
    schema: hyparquetSchema(),
    codec,
    // SNAPPY is built in (pure JS); any other codec needs a function, here node:zlib's.
    compressors: { GZIP: (input) => gzipSync(input, { level: 6 }), ZSTD: (input) => zstdCompressSync(input) },
    createdBy: 'bulk-extract bench',
  });
  const newColumns = () => ({
    id: [], externalId: [], type: [], subtype: [], description: [], startTime: [], endTime: [], assetIds: [],
    source: [], dataSetId: [], metadata: [], createdTime: [], lastUpdatedTime: [], extra: [],
  });
  let c = newColumns();
  let rows = 0;
  let rowGroups = 0;
  const flush = async () => {
    await writer.write({
      columnData: Object.entries(c).map(([name, data]) => ({
        name, data, ...(delta && DELTA_ENCODINGS[name] ? { encoding: DELTA_ENCODINGS[name] } : {}),
      })),
      rowGroupSize: rows,
    });
    rowGroups++;
    c = newColumns();
    rows = 0;
  };
  const big = (v) => (v === undefined || v === null ? null : BigInt(v));
  for (const items of pages) {
    for (const item of items) {
      c.id.push(BigInt(item.id));
      c.externalId.push(item.externalId);
      c.type.push(item.type);
      c.subtype.push(item.subtype ?? null);
      c.description.push(item.description ?? null);
      c.startTime.push(item.startTime);
      c.endTime.push(item.endTime ?? null);
      c.assetIds.push((item.assetIds ?? []).map(BigInt));
      c.source.push(item.source);
      c.dataSetId.push(big(item.dataSetId));
      c.metadata.push(item.metadata ?? null);
      c.createdTime.push(item.createdTime);
      c.lastUpdatedTime.push(item.lastUpdatedTime);
      c.extra.push(extraOf(item));
    }
    rows += items.length;
    if (rows >= ROW_GROUP) await flush();
  }
  if (rows > 0) await flush();
  await writer.finish();
  const codecs = { GZIP: 'gzip level 6 (node:zlib, passed in)', ZSTD: 'zstd level 3 (node:zlib, passed in)', SNAPPY: 'snappy (built-in, pure JS)' };
  return { codec: codecs[codec], extra: { batches: rowGroups } };
}

// Last, so that every const and class above is initialised before it runs.
if (args.only !== undefined) await child(args.only);
else await parent();
