import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { openAsBlob } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { JobConfig } from '../config/load-config.js';
import { BulkExtractError } from '../errors.js';
import type { Logger } from '../log.js';
import { downloadAll } from '../output/download.js';
import { LATEST_FILE, MANIFEST_FILE, SUCCESS_FILE, shardSeq } from './layout.js';
import { type Manifest, type ManifestFile, manifestSchema, type RunManifest, runManifestSchema } from './manifest.js';
import { isS3Url, openOutput } from './output-target.js';
import { ifFound } from '../util/if-found.js';
import { parseStateFile } from './state-file.js';

/** The folder is not a bulk-extract output (no readable manifest). */
export class NotAnOutputError extends BulkExtractError {
  readonly code = 'E_NOT_OUTPUT';
}

export interface VerifyReport {
  state: Manifest['state'];
  success: boolean;
  /** Files and rows per format (each format holds every row once). */
  formats: Partial<Record<ManifestFile['format'], { files: number; rows: number }>>;
  problems: string[];
}

/**
 * Reads back every shard the manifest lists: present, same size, same sha256, same row count (from
 * the Parquet footer, or NDJSON lines). Shard files the manifest does not list are problems too.
 * The shards of completed incremental and snapshot runs are listed by their run folder's
 * `_manifest.json`; a snapshot stream's `_LATEST` must name one of its sealed runs.
 */
export async function verifyOutput(outDir: string): Promise<VerifyReport> {
  const manifest = await readManifest(outDir);
  const problems: string[] = [];
  const streams = Object.keys(manifest.streams);
  const files = new Map(manifest.files.map((file) => [file.path, file]));
  for (const run of await runManifests(outDir, streams, problems)) {
    for (const file of run.files) files.set(file.path, file);
  }
  for (const file of files.values()) problems.push(...(await checkFile(outDir, file)));
  for (const stream of streams) problems.push(...(await checkLatest(outDir, stream)));
  const listed = new Set(files.keys());
  for (const path of await shardFiles(outDir, streams)) {
    if (!listed.has(path)) problems.push(`${path}: a shard file the manifest does not list`);
  }
  const success = (await ifFound(stat(join(outDir, SUCCESS_FILE)), join(outDir, SUCCESS_FILE))) !== undefined;
  if (success && manifest.state !== 'complete') problems.push(`_SUCCESS exists but the manifest says '${manifest.state}'`);
  const formats: VerifyReport['formats'] = {};
  for (const file of files.values()) {
    const entry = (formats[file.format] ??= { files: 0, rows: 0 });
    entry.files++;
    entry.rows += file.rows;
  }
  return { state: manifest.state, success, formats, problems };
}

async function readManifest(outDir: string): Promise<Manifest> {
  const path = join(outDir, MANIFEST_FILE);
  const text = await ifFound(readFile(path, 'utf8'), path);
  if (text === undefined) {
    throw new NotAnOutputError(`${outDir} has no ${MANIFEST_FILE}: it is not a bulk-extract output folder.`);
  }
  try {
    return parseStateFile(text, path, manifestSchema, 'a bulk-extract manifest');
  } catch (error) {
    throw new NotAnOutputError((error as Error).message, { cause: error });
  }
}

export async function checkFile(outDir: string, file: ManifestFile): Promise<string[]> {
  const path = join(outDir, file.path);
  const size = (await ifFound(stat(path), path))?.size;
  if (size === undefined) return [`${file.path}: missing`];
  const problems: string[] = [];
  if (size !== file.bytes) problems.push(`${file.path}: ${size} bytes on disk, ${file.bytes} in the manifest`);
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  const sha256 = hash.digest('hex');
  if (sha256 !== file.sha256) problems.push(`${file.path}: sha256 ${sha256} on disk, ${file.sha256} in the manifest`);
  try {
    const rows = file.format === 'parquet' ? await parquetRows(path) : await ndjsonRows(path);
    if (rows !== file.rows) problems.push(`${file.path}: ${rows} rows in the file, ${file.rows} in the manifest`);
  } catch (error) {
    problems.push(`${file.path}: unreadable ${file.format} (${(error as Error).message})`);
  }
  return problems;
}

/** Row count from the Parquet footer; only the footer is read. */
async function parquetRows(path: string): Promise<number> {
  // Loaded on first use: parquet-wasm takes about 20 MB that an NDJSON-only run never needs.
  const { ParquetFile } = await import('parquet-wasm');
  const file = await ParquetFile.fromFile(await openAsBlob(path));
  try {
    const metadata = file.metadata();
    const fileMetadata = metadata.fileMetadata();
    const rows = fileMetadata.numRows();
    fileMetadata.free();
    metadata.free();
    return rows;
  } finally {
    file.free();
  }
}

async function ndjsonRows(path: string): Promise<number> {
  let lines = 0;
  const source = createReadStream(path);
  const stream = path.endsWith('.gz') ? source.pipe(createGunzip()) : source;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return lines;
}

/** A snapshot stream's `_LATEST` must name a sealed run folder of the stream. */
async function checkLatest(outDir: string, stream: string): Promise<string[]> {
  const path = `${stream}/${LATEST_FILE}`;
  const text = await ifFound(readFile(join(outDir, path), 'utf8'), join(outDir, path));
  if (text === undefined) return [];
  const run = text.trim();
  if (!/^run=[^/]+$/.test(run)) return [`${path}: does not name a run folder (${JSON.stringify(run.slice(0, 40))})`];
  const seal = join(outDir, stream, run, SUCCESS_FILE);
  const sealed = (await ifFound(stat(seal), seal)) !== undefined;
  return sealed ? [] : [`${path}: names ${run}, which is not a sealed run (no ${run}/${SUCCESS_FILE})`];
}

/** The manifests of sealed runs (`<stream>/run=*\/_manifest.json`); unreadable ones are problems. */
async function runManifests(outDir: string, streams: readonly string[], problems: string[]): Promise<RunManifest[]> {
  const found: RunManifest[] = [];
  for (const stream of streams) {
    for (const run of await runFolders(outDir, stream)) {
      const path = `${run}/${MANIFEST_FILE}`;
      const text = await ifFound(readFile(join(outDir, path), 'utf8'), join(outDir, path));
      if (text === undefined) continue;
      try {
        found.push(parseStateFile(text, path, runManifestSchema, 'the manifest of a sealed run'));
      } catch (error) {
        problems.push(`${path}: damaged (${(error as Error).message})`);
      }
    }
  }
  return found;
}

async function runFolders(outDir: string, stream: string): Promise<string[]> {
  const names = (await ifFound(readdir(join(outDir, stream)), join(outDir, stream))) ?? [];
  return names.filter((name) => name.startsWith('run=')).map((name) => `${stream}/${name}`);
}

/** Shard files under the streams' partition folders (and their runs' folders), as manifest paths. */
async function shardFiles(outDir: string, streams: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  const scan = async (folder: string) => {
    const parts = (await ifFound(readdir(join(outDir, folder)), join(outDir, folder))) ?? [];
    for (const part of parts.filter((name) => name.startsWith('part='))) {
      const at = join(outDir, folder, part);
      const names = (await ifFound(readdir(at), at)) ?? [];
      for (const name of names) if (shardSeq(name) !== undefined) found.push(`${folder}/${part}/${name}`);
    }
  };
  for (const stream of streams) {
    await scan(stream);
    for (const run of await runFolders(outDir, stream)) await scan(run);
  }
  return found;
}

/** The output of a job: its folder, or a downloaded copy of its bucket prefix (it needs that much space). */
export async function verifyJob(config: JobConfig, logger: Logger): Promise<VerifyReport> {
  if (!isS3Url(config.output.dir)) return verifyOutput(resolve(config.output.dir));
  const { store } = await openOutput(config, logger);
  const copy = await mkdtemp(join(tmpdir(), 'bulk-extract-verify-'));
  try {
    return await verifyOutput(await downloadAll(store, copy));
  } finally {
    await store.close();
    await rm(copy, { recursive: true, force: true });
  }
}
