import { createHash } from 'node:crypto';
import { createReadStream, openAsBlob } from 'node:fs';
import { createGunzip } from 'node:zlib';
import type { OutputStore } from '../../output/index.js';
import type { ManifestFile } from '../state/index.js';

/** An item's key as read back from a shard: an integer id, or an externalId. */
export type KeyValue = number | bigint | string;

/**
 * What reading back a shard is asked to do besides checking it: hand on every row's values of a
 * few fields, in the shard's order (a key to check, a point's time to place in its window).
 */
export interface RowReader {
  /** The fields to read, in this shard's format (a column of a Parquet shard, a member of an NDJSON line). */
  fields: readonly string[];
  /** Each row's values of `fields`, in their order: undefined for a member a line lacks. */
  row(values: readonly unknown[]): void;
}

/** One key of a row's values (a datapoint: its series and time, joined by `@`): undefined when one is missing. */
export function joinedKey(values: readonly unknown[]): KeyValue | undefined {
  if (values.length === 1) {
    const [value] = values;
    return typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' ? value : undefined;
  }
  const parts: string[] = [];
  for (const value of values) {
    if (typeof value !== 'number' && typeof value !== 'bigint' && typeof value !== 'string') return undefined;
    parts.push(String(value));
  }
  return parts.join('@');
}

/**
 * Reads a shard back and compares it with its manifest entry: present, same size, same sha256,
 * same row count (Parquet: from the footer; NDJSON: its lines). With `rows`, every row's values of
 * its fields are handed to it as well (Parquet: those columns, a row group at a time; NDJSON: each
 * line parsed). Resolves to what is wrong, one line each; a shard that cannot be read is one such line.
 */
export async function checkShard(store: OutputStore, file: ManifestFile, rows?: RowReader): Promise<string[]> {
  const size = await store.size(file.path);
  if (size === undefined) return [`${file.path}: missing`];
  const problems: string[] = [];
  if (size !== file.bytes) problems.push(`${file.path}: ${size} bytes in the output, ${file.bytes} in the manifest`);
  const copy = await store.localCopy(file.path);
  try {
    const sha256 = await hashOf(copy.path);
    if (sha256 !== file.sha256) problems.push(`${file.path}: sha256 ${sha256} in the output, ${file.sha256} in the manifest`);
    try {
      const count =
        file.format === 'parquet' ? await parquetRows(copy.path, rows) : await ndjsonRows(copy.path, file.path.endsWith('.gz'), rows);
      if (count !== file.rows) problems.push(`${file.path}: ${count} rows in the file, ${file.rows} in the manifest`);
    } catch (error) {
      problems.push(`${file.path}: damaged: unreadable ${file.format} (${(error as Error).message})`);
    }
  } finally {
    await copy.release();
  }
  return problems;
}

async function hashOf(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}

/** Row count from the Parquet footer; with `reader`, its columns are read too, one row group at a time. */
async function parquetRows(path: string, reader: RowReader | undefined): Promise<number> {
  // Loaded on first use: parquet-wasm and apache-arrow take about 20 MB that an NDJSON-only output never needs.
  const { ParquetFile } = await import('parquet-wasm');
  const file = await ParquetFile.fromFile(await openAsBlob(path));
  try {
    const metadata = file.metadata();
    const fileMetadata = metadata.fileMetadata();
    const rows = fileMetadata.numRows();
    const groups = metadata.numRowGroups();
    fileMetadata.free();
    metadata.free();
    if (reader !== undefined) {
      const { tableFromIPC } = await import('apache-arrow');
      for (let group = 0; group < groups; group++) {
        const read = await file.read({ columns: [...reader.fields], rowGroups: [group] });
        const table = tableFromIPC(read.intoIPCStream());
        const columns = reader.fields.map((field) => {
          const column = table.getChild(field);
          if (column === null) throw new Error(`no column '${field}'`);
          return column;
        });
        for (let row = 0; row < table.numRows; row++) {
          reader.row(columns.map((column) => column.get(row) as unknown));
        }
      }
    }
    return rows;
  } finally {
    file.free();
  }
}

/** NDJSON lines; with `reader`, each line is parsed and its values handed on. */
async function ndjsonRows(path: string, gzip: boolean, reader: RowReader | undefined): Promise<number> {
  let lines = 0;
  const source = createReadStream(path);
  const stream = gzip ? source.pipe(createGunzip()) : source;
  source.on('error', (error) => stream.destroy(error));
  let partial: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      lines++;
      if (reader !== undefined) {
        const rest = chunk.subarray(start, end);
        const line = partial.length === 0 ? rest : Buffer.concat([...partial, rest]);
        reader.row(valuesOfLine(line, reader.fields, lines));
        partial = [];
      }
      start = end + 1;
    }
    if (reader !== undefined && start < chunk.length) partial.push(chunk.subarray(start));
  }
  return lines;
}

function valuesOfLine(line: Buffer, fields: readonly string[], number: number): unknown[] {
  let item: unknown;
  try {
    item = JSON.parse(line.toString('utf8'));
  } catch {
    throw new Error(`line ${number} is not JSON`);
  }
  return fields.map((field) => (item as Record<string, unknown> | null)?.[field]);
}
