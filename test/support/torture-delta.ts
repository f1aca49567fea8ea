import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Resource } from '../../src/config/job-schema.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { runId } from '../../src/export/state/checkpoint.js';
import { parseStateFile, windowManifestSchema } from '../../src/export/state/index.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore, type DeltaSnapshot, type OutputStore, readDeltaLog } from '../../src/output/index.js';
import { resourceSpec } from '../../src/resources/index.js';
import { openDuck, parquetItems } from './export-duckdb.js';
import { listFiles, type StreamSpec } from './resume-harness.js';
import { expectRowsByKey } from './rows-by-key.js';

/**
 * The crash torture's Delta table streams (`output.table: delta`), checked with the log reader and
 * DuckDB, never with the writer's code. After every run, killed or not, what must hold at every
 * instant: every version from 0 to the latest replays, to exactly the Parquet files of whole
 * runs as their `_manifest.json` lists them (one run for a full export or a snapshot, every window
 * so far for an incremental stream); each run is committed once, in order; a version once
 * committed never changes; and every file of a version still kept is there at its size. After a
 * completed round: no temporary is left, the sealed runs are exactly those the kept versions hold,
 * the latest version's rows equal the source row for row (an incremental stream's newest row of
 * each key), and verify finds nothing.
 */

type Row = Record<string, unknown>;

/** The transaction identifier bulk-extract commits under (delta-table.ts). */
const TXN_APP_ID = 'bulk-extract';
const MANIFEST = '_manifest.json';
const SUCCESS = '_SUCCESS';

/** A file of a version as this check records it: key, size and stats' row count. */
type VersionFile = `${string} ${number} bytes ${number | '?'} rows`;

interface WatchedTable {
  name: string;
  resource: Resource;
  mode: 'full' | 'incremental' | 'snapshot';
  /**
   * The newest versions whose files must stay: a snapshot stream's `keep`; 1 for a full export
   * (each version an overwrite); 1 for an incremental stream, whose appends hold every window.
   */
  kept: number;
  /** Every run manifest seen so far, by run id: its text (it must never change) and its Parquet files. */
  runs: Map<string, { text: string; files: VersionFile[] }>;
  /** Every version seen so far: its files as first replayed, and the run its transaction names. */
  versions: Map<number, { files: VersionFile[]; run: string }>;
}

/**
 * Watches the Delta tables of one torture's output from run to run. Collection streams only; an
 * incremental stream must never be started over (--fresh): its versions are checked to hold every
 * window since its first.
 */
export class TableWatch {
  private readonly tables: WatchedTable[];
  private readonly store: OutputStore;

  constructor(
    private readonly out: string,
    streams: readonly StreamSpec[],
  ) {
    this.store = createLocalStore(out, silentLogger);
    this.tables = streams.map((stream) => {
      const mode = stream.mode ?? 'full';
      if (mode === 'snapshot' && stream.keep === undefined) throw new Error('a watched snapshot stream needs keep');
      return {
        name: stream.name ?? stream.resource,
        resource: stream.resource,
        mode,
        kept: mode === 'snapshot' ? (stream.keep ?? 1) : 1,
        runs: new Map(),
        versions: new Map(),
      };
    });
  }

  /** The latest version of each table, by stream (-1: none committed yet). */
  latestVersions(): Record<string, number> {
    return Object.fromEntries(this.tables.map((table) => [table.name, latestSeen(table)]));
  }

  /** After any run, a killed one too: the invariants of every instant (see the file's comment). */
  async afterRun(): Promise<void> {
    for (const table of this.tables) {
      this.readRunManifests(table);
      const latest = await this.latestVersion(table);
      if (latest === undefined) continue;
      let before = '';
      for (let version = 0; version <= latest.version; version++) {
        const snapshot =
          version === latest.version ? latest : await readDeltaLog(this.store, table.name, { asOf: version });
        const files = filesOf(snapshot);
        const run = runOf(table, snapshot);
        const seen = table.versions.get(version);
        if (seen === undefined) table.versions.set(version, { files, run });
        else expect({ files, run }, `${table.name} version ${version} changed since it was committed`).toEqual(seen);
        expect(run > before, `${table.name} version ${version}: run=${run} committed again, or after a later one`).toBe(true);
        before = run;
        expect(files, `${table.name} version ${version}: the files of whole runs`).toEqual(this.runFiles(table, run));
      }
      for (let version = Math.max(0, latest.version - table.kept + 1); version <= latest.version; version++) {
        for (const file of table.versions.get(version)?.files ?? []) {
          const [key = '', bytes] = file.split(' ');
          const path = join(this.out, key);
          expect(existsSync(path), `${key} of ${table.name} version ${version} (kept, latest ${latest.version}) is gone`).toBe(true);
          expect(statSync(path).size, `size of ${key}`).toBe(Number(bytes));
        }
      }
    }
  }

  /**
   * After a completed round: no temporary or lock left; per table, the sealed runs are those of the
   * kept versions (an incremental stream: every window), and the latest version's rows are the
   * source's (`expected`, by key); verify finds no problem.
   */
  async expectRound(expected: (resource: Resource) => ReadonlyMap<unknown, Row>): Promise<void> {
    const files = listFiles(this.out);
    // A run killed while it writes its record (`_runs/`, after its output is complete) leaves the
    // record's temporary, which no run removes yet: a fault of the run records, not of the tables.
    const temps = files.filter((file) => file.endsWith('.inprogress') && !file.startsWith('_runs/'));
    expect(temps, `temporaries left (a table's log included): ${temps.join(', ')}`).toEqual([]);
    expect(files, 'lock left behind').not.toContain('.lock');
    expect(files, '_SUCCESS missing').toContain(SUCCESS);
    const duck = await openDuck();
    try {
      for (const table of this.tables) {
        const latest = await this.latestVersion(table);
        expect(latest, `${table.name}: no version committed`).toBeDefined();
        if (latest === undefined) continue;
        expect(this.sealedRuns(table), `${table.name}: the sealed runs`).toEqual(this.keptRuns(table, latest.version));
        const paths = latest.files.map((file) => join(this.out, file.key));
        const rows = paths.length === 0 ? [] : await parquetItems(duck, table.resource, paths);
        const key = resourceSpec(table.resource).key;
        const keyOf = (row: Row) => String(row[key]);
        const want = new Map([...expected(table.resource)].map(([k, row]) => [String(k), definedFields(row)]));
        const what = `${table.name} version ${latest.version}`;
        expectRowsByKey(what, table.mode === 'incremental' ? newestOfEach(what, rows, keyOf) : rows, want, keyOf);
      }
    } finally {
      duck.close();
    }
    expect((await verifyOutput(this.out)).problems).toEqual([]);
  }

  /** Records the `_manifest.json` of every run folder of the table; one seen before must be unchanged. */
  private readRunManifests(table: WatchedTable): void {
    for (const run of runFolders(this.out, table.name)) {
      const path = join(this.out, table.name, `run=${run}`, MANIFEST);
      if (!existsSync(path)) continue;
      const text = readFileSync(path, 'utf8');
      const seen = table.runs.get(run);
      if (seen !== undefined) {
        expect(text, `${path} changed`).toBe(seen.text);
        continue;
      }
      const manifest = parseStateFile(text, path, windowManifestSchema, 'a run manifest');
      expect(manifest.run).toBe(run);
      const parquet = manifest.files.filter((file) => file.format === 'parquet');
      table.runs.set(run, { text, files: parquet.map((file) => versionFile(file.path, file.bytes, file.rows)).sort() });
    }
  }

  /** The table's latest version, or undefined before its first commit (a version once there never goes). */
  private async latestVersion(table: WatchedTable): Promise<DeltaSnapshot | undefined> {
    const log = join(this.out, table.name, '_delta_log');
    const commits = existsSync(log) ? readdirSync(log).filter((name) => /^\d{20}\.json$/.test(name)) : [];
    if (commits.length === 0) {
      expect(table.versions.size, `${table.name}: its committed versions are gone`).toBe(0);
      return undefined;
    }
    const latest = await readDeltaLog(this.store, table.name);
    expect(latest.version, `${table.name}: the latest version went back`).toBeGreaterThanOrEqual(latestSeen(table));
    return latest;
  }

  /**
   * The files a version that committed the run `last` must hold, from the run manifests: that run's
   * (a full export, a snapshot), or those of every window up to it (an incremental stream).
   */
  private runFiles(table: WatchedTable, last: string): VersionFile[] {
    const runs = table.mode === 'incremental' ? [...[...table.runs.keys()].filter((run) => run < last), last] : [last];
    return runs.flatMap((run) => {
      const files = table.runs.get(run)?.files;
      expect(files, `${table.name}: run=${run} has no manifest`).toBeDefined();
      return files ?? [];
    }).sort();
  }

  /** The table's run folders that hold a `_SUCCESS`. */
  private sealedRuns(table: WatchedTable): string[] {
    return runFolders(this.out, table.name).filter((run) => existsSync(join(this.out, table.name, `run=${run}`, SUCCESS)));
  }

  /** The runs whose folders stay: every window of an incremental stream; else the runs of the kept versions. */
  private keptRuns(table: WatchedTable, latest: number): string[] {
    if (table.mode === 'incremental') return [...table.runs.keys()].sort();
    const runs = new Set<string>();
    for (let version = Math.max(0, latest - table.kept + 1); version <= latest; version++) {
      const run = table.versions.get(version)?.run;
      if (run !== undefined) runs.add(run);
    }
    return [...runs].sort();
  }
}

/** The latest version seen of a table; -1 before its first. */
function latestSeen(table: WatchedTable): number {
  return Math.max(-1, ...table.versions.keys());
}

/** The run a version committed: its bulk-extract transaction's version is the run's start (`run=<id>`). */
function runOf(table: WatchedTable, snapshot: DeltaSnapshot): string {
  const txn = snapshot.txns.get(TXN_APP_ID)?.version;
  expect(txn, `${table.name} version ${snapshot.version}: no ${TXN_APP_ID} transaction`).toBeDefined();
  return runId(txn ?? 0);
}

/** A version's files, sorted. */
function filesOf(snapshot: DeltaSnapshot): VersionFile[] {
  return snapshot.files.map((file) => versionFile(file.key, file.size, file.stats?.numRecords)).sort();
}

function versionFile(key: string, bytes: number, rows: number | undefined): VersionFile {
  return `${key} ${bytes} bytes ${rows ?? '?'} rows`;
}

/** The `run=<id>` folders of a stream, by id. */
function runFolders(out: string, stream: string): string[] {
  const dir = join(out, stream);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => name.startsWith('run=')).map((name) => name.slice('run='.length)).sort();
}

/**
 * An incremental table's current state: the newest row of each key (by lastUpdatedTime). No
 * version of a key may be there twice: a window appended twice would repeat them all.
 */
function newestOfEach(what: string, rows: readonly Row[], keyOf: (row: Row) => string): Row[] {
  const newest = new Map<string, Row>();
  const versions = new Set<string>();
  for (const row of rows) {
    const key = keyOf(row);
    const version = `${key}@${String(row.lastUpdatedTime)}`;
    if (versions.has(version)) expect.fail(`${what}: ${version} repeated`);
    versions.add(version);
    const before = newest.get(key);
    if (before === undefined || Number(before.lastUpdatedTime) < Number(row.lastUpdatedTime)) newest.set(key, row);
  }
  return [...newest.values()];
}

/** A source item without its undefined fields, as a row read back lacks them. */
function definedFields(row: Row): Row {
  return Object.fromEntries(Object.entries(row).filter(([, value]) => value !== undefined));
}
