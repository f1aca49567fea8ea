import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import type { DataType } from 'apache-arrow';
import type { OutputStore } from '../store.js';
import type { DeltaMetaData, DeltaProtocol, DeltaTxn } from './actions.js';
import { checkpointNames, LAST_CHECKPOINT, LOG_FOLDER } from './log-names.js';
import type { DeltaFile } from './table-state.js';
import { TEMP_SUFFIX } from '../../util/durable-file.js';

/**
 * A classic single-part checkpoint (delta-io/delta PROTOCOL.md, "Checkpoints" and "Checkpoint
 * Schema"): `_delta_log/%020d.checkpoint.parquet` holding the reconciled state of a version, one
 * action per row in the struct columns txn, add, remove, metaData and protocol (the others null),
 * then `_last_checkpoint` pointing to it. Written from what readDeltaLog replays.
 */

/** The state a checkpoint holds: readDeltaLog's snapshot has all of it. */
export interface CheckpointState {
  protocol: DeltaProtocol;
  metaData: DeltaMetaData;
  /** The active files; `path` as the log holds it (URI-encoded), stats parsed. */
  files: readonly DeltaFile[];
  txns: ReadonlyMap<string, DeltaTxn>;
}

/** What `_last_checkpoint` says (PROTOCOL.md, "Last Checkpoint File Schema"). */
export interface LastCheckpointJson {
  version: number;
  /** The number of actions (rows) in the checkpoint. */
  size: number;
  sizeInBytes: number;
  numOfAddFiles: number;
}

/**
 * Writes the checkpoint of `version` of the table in `tableFolder` ('' for the store's root), then
 * `_last_checkpoint`. The checkpoint file appears whole (a temp file renamed, or one upload); it
 * replaces a checkpoint of the same version, which holds the same state. Tombstones (removes) are
 * not kept: the snapshot has none, and a checkpoint may drop them (only VACUUM reads them).
 * A stats string is written back as the log held it.
 */
export async function writeCheckpoint(
  store: OutputStore,
  tableFolder: string,
  version: number,
  state: CheckpointState,
): Promise<LastCheckpointJson> {
  const logFolder = tableFolder === '' ? LOG_FOLDER : `${tableFolder}/${LOG_FOLDER}`;
  const bytes = await checkpointBytes(state);
  const key = `${logFolder}/${checkpointNames(version, 1)[0]!}`;
  await putBytes(store, key, bytes);
  const last: LastCheckpointJson = {
    version,
    size: 2 + state.txns.size + state.files.length,
    sizeInBytes: bytes.byteLength,
    numOfAddFiles: state.files.length,
  };
  await store.putText(`${logFolder}/${LAST_CHECKPOINT}`, JSON.stringify(last));
  return last;
}

/** The checkpoint's Parquet bytes: protocol, metaData, then each txn, then each add, one row each. */
export async function checkpointBytes(state: CheckpointState): Promise<Uint8Array> {
  // Loaded on first use, as the checkpoint reader does: parquet-wasm and apache-arrow are large.
  const arrow = await import('apache-arrow');
  const wasm = await import('parquet-wasm');
  const { Field, Struct, Utf8, Int32, Int64, Bool, List, Map_ } = arrow;
  const string = () => new Utf8();
  const long = () => new Int64();
  const field = (name: string, type: DataType) => new Field(name, type, true);
  const map = () => {
    const entries = new Struct<{ key: InstanceType<typeof Utf8>; value: InstanceType<typeof Utf8> }>([
      new Field('key', string(), false),
      new Field('value', string(), true),
    ]);
    return new Map_(new Field('entries', entries, false));
  };
  const strings = () => new List(field('element', string()));
  const columns: [string, DataType][] = [
    ['txn', new Struct([field('appId', string()), field('version', long()), field('lastUpdated', long())])],
    ['add', new Struct([
      field('path', string()),
      field('partitionValues', map()),
      field('size', long()),
      field('modificationTime', long()),
      field('dataChange', new Bool()),
      field('stats', string()),
    ])],
    ['remove', new Struct([
      field('path', string()),
      field('deletionTimestamp', long()),
      field('dataChange', new Bool()),
      field('extendedFileMetadata', new Bool()),
      field('partitionValues', map()),
      field('size', long()),
    ])],
    ['metaData', new Struct([
      field('id', string()),
      field('name', string()),
      field('description', string()),
      field('format', new Struct([field('provider', string()), field('options', map())])),
      field('schemaString', string()),
      field('partitionColumns', strings()),
      field('configuration', map()),
      field('createdTime', long()),
    ])],
    ['protocol', new Struct([
      field('minReaderVersion', new Int32()),
      field('minWriterVersion', new Int32()),
      field('readerFeatures', strings()),
      field('writerFeatures', strings()),
    ])],
  ];
  const { protocol, metaData } = state;
  const rows: Record<string, unknown>[] = [
    { protocol: { readerFeatures: null, writerFeatures: null, ...protocol } },
    {
      metaData: {
        id: metaData.id,
        name: metaData.name ?? null,
        description: metaData.description ?? null,
        format: metaData.format,
        schemaString: metaData.schemaString ?? null,
        partitionColumns: metaData.partitionColumns,
        configuration: metaData.configuration,
        createdTime: big(metaData.createdTime),
      },
    },
    ...[...state.txns.values()].map((txn) => ({
      txn: { appId: txn.appId, version: BigInt(txn.version), lastUpdated: big(txn.lastUpdated) },
    })),
    ...state.files.map((file) => ({
      add: {
        path: file.path,
        partitionValues: file.partitionValues,
        size: BigInt(file.size),
        modificationTime: BigInt(file.modificationTime),
        dataChange: file.dataChange,
        stats: file.statsText ?? (file.stats === undefined ? null : JSON.stringify(file.stats)),
      },
    })),
  ];
  const vectors = Object.fromEntries(
    columns.map(([name, type]) => [name, arrow.vectorFromArray(rows.map((row) => row[name] ?? null), type)]),
  );
  const table = new arrow.Table(vectors);
  const properties = new wasm.WriterPropertiesBuilder()
    .setCompression(wasm.Compression.SNAPPY)
    .setCreatedBy('bulk-extract')
    .build();
  const wasmTable = wasm.Table.fromIPCStream(arrow.tableToIPC(table, 'stream'));
  return wasm.writeParquet(wasmTable, properties);
}

function big(value: number | undefined): bigint | null {
  return value === undefined ? null : BigInt(value);
}

/** Puts `bytes` at `key` whole: a temp file beside the staged place, fsynced and renamed, then published. */
async function putBytes(store: OutputStore, key: string, bytes: Uint8Array): Promise<void> {
  const staged = await store.stage(key);
  // Named as writeFileIfAbsent names its temporaries, so that one cleanup knows both.
  const temp = `${staged}.${process.pid}-${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`;
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, staged);
  } finally {
    await rm(temp, { force: true });
  }
  await store.publish(key);
}
