import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layout CONTRIBUTING.md describes, checked on the import statements of src/: folders import
 * only from folders below them, the export engine, output/ and sink/ are entered only through their
 * index.ts, and no file reaches itself through its imports.
 */

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** A folder's layer: what it may import at run time besides itself. `base` is util/ and src/*.ts but index.ts. */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  base: [],
  resources: ['base'],
  output: ['base'],
  page: ['base'],
  http: ['page', 'base'],
  config: ['http', 'resources', 'base'],
  connect: ['config', 'http', 'base'],
  sink: ['config', 'page', 'resources', 'base'],
  simulator: ['resources', 'base'],
  export: ['config', 'connect', 'http', 'output', 'page', 'resources', 'sink', 'base'],
  metrics: ['config', 'connect', 'export', 'http', 'base'],
  cli: ['config', 'connect', 'export', 'http', 'metrics', 'simulator', 'base'],
  entry: ['config', 'connect', 'export', 'http', 'simulator', 'base'],
};

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts'))
  .map((name) => name.split('\\').join('/'))
  .sort();

/** The relative imports (and re-exports) of a file, with whether they are type-only. */
function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(join(SRC, file), 'utf8'), ts.ScriptTarget.Latest);
  const found: Import[] = [];
  for (const statement of source.statements) {
    let specifier: ts.Expression | undefined;
    let typeOnly = false;
    if (ts.isImportDeclaration(statement)) {
      specifier = statement.moduleSpecifier;
      const clause = statement.importClause;
      typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
    } else if (ts.isExportDeclaration(statement)) {
      specifier = statement.moduleSpecifier;
      typeOnly =
        statement.isTypeOnly ||
        (statement.exportClause !== undefined &&
          ts.isNamedExports(statement.exportClause) &&
          statement.exportClause.elements.every((element) => element.isTypeOnly));
    }
    if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
    const to = relative(SRC, resolve(SRC, dirname(file), specifier.text.replace(/\.js$/, '.ts'))).split('\\').join('/');
    found.push({ from: file, to, typeOnly });
  }
  return found;
}

const imports = files.flatMap(importsOf);

/** The packages a file imports at run time (not only their types). */
function packagesOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(SRC, file), 'utf8'), ts.ScriptTarget.Latest);
  return source.statements.flatMap((statement) => {
    if (!ts.isImportDeclaration(statement) || statement.importClause?.isTypeOnly === true) return [];
    const { moduleSpecifier } = statement;
    return ts.isStringLiteral(moduleSpecifier) && !moduleSpecifier.text.startsWith('.') ? [moduleSpecifier.text] : [];
  });
}

function folderOf(file: string): string {
  if (file === 'index.ts') return 'entry';
  if (!file.includes('/') || file.startsWith('util/')) return 'base';
  return file.split('/')[0] ?? '';
}

/**
 * The files of sink/ the Delta table writer (export/state/delta-table.ts) takes past sink/index.ts:
 * a stream's Delta schema is made with apache-arrow, which sink/index.ts must not load at start
 * (CONTRIBUTING.md), and the writer is loaded only for a Delta table.
 */
const SINK_SIDE_DOORS = ['sink/delta/index.ts', 'sink/stream-schema.ts'];

describe('the import statements of src/', () => {
  it('are read (the check sees the files it is about)', () => {
    expect(files).toEqual(expect.arrayContaining(['index.ts', 'cli/main.ts', 'export/index.ts', 'export/run/run-job.ts']));
    expect(imports.length).toBeGreaterThan(200);
    expect(imports.filter((each) => !files.includes(each.to))).toEqual([]);
    expect(imports.some((each) => each.typeOnly)).toBe(true);
  });

  it('put every folder in a layer', () => {
    expect([...new Set(files.map(folderOf))].filter((folder) => MAY_IMPORT[folder] === undefined)).toEqual([]);
  });

  it('import only from their own folder or from the folders below it, type-only imports included', () => {
    const upwards = imports
      .filter(({ from, to }) => folderOf(from) !== folderOf(to))
      .filter(({ from, to }) => !(MAY_IMPORT[folderOf(from)] ?? []).includes(folderOf(to)))
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(upwards).toEqual([]);
  });

  it('enter the export engine only through export/index.ts', () => {
    const inner = imports.filter(
      ({ from, to }) => folderOf(to) === 'export' && folderOf(from) !== 'export' && to !== 'export/index.ts',
    );
    expect(inner.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('enter output/ only through output/index.ts', () => {
    const inner = imports.filter(
      ({ from, to }) => folderOf(to) === 'output' && folderOf(from) !== 'output' && to !== 'output/index.ts',
    );
    expect(inner.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('leave the choice between a folder and a bucket to output/: no file outside it mentions isS3Url', () => {
    const mentions = files.filter((file) => !file.startsWith('output/') && readFileSync(join(SRC, file), 'utf8').includes('isS3Url'));
    expect(mentions).toEqual([]);
    expect(files.filter((file) => readFileSync(join(SRC, file), 'utf8').includes('isS3Url')), 'the check sees it').not.toEqual([]);
  });

  it('make no cycle of files, type-only imports included', () => {
    expect(cyclesOf(imports)).toEqual([]);
    const [some] = imports;
    const back = some === undefined ? [] : [{ from: some.to, to: some.from, typeOnly: true }];
    expect(cyclesOf([...imports, ...back]), 'the check sees one').not.toEqual([]);
  });

  it('enter sink/ only through sink/index.ts, the Delta schema\'s two side doors aside', () => {
    const inner = imports.filter(
      ({ from, to }) =>
        folderOf(to) === 'sink' && folderOf(from) !== 'sink' && to !== 'sink/index.ts' && !SINK_SIDE_DOORS.includes(to),
    );
    expect(inner.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
    expect(SINK_SIDE_DOORS.filter((door) => !files.includes(door)), 'the side doors are files').toEqual([]);
  });

  it.each(['cli/run.ts', 'index.ts', 'sink/index.ts'])(
    'load no apache-arrow or parquet-wasm from %s at start: they load with the first Parquet shard, or a Delta schema',
    (entry) => {
      const reached = loadedAtStart(entry);
      expect(reached.size, 'the check sees them').toBeGreaterThan(10);
      const heavy = (file: string) => packagesOf(file).some((name) => ['apache-arrow', 'parquet-wasm'].includes(name));
      expect([...reached].filter(heavy)).toEqual([]);
      expect(heavy('sink/parquet/arrow-types.ts'), 'the check sees them').toBe(true);
    },
  );

  it('load each command of cli/main.ts when it runs: at start only what --version and an error need', () => {
    const reached = [...loadedAtStart('cli/main.ts')].sort();
    expect(reached).toEqual(['cli/exit-codes.ts', 'cli/main.ts', 'errors.ts', 'version.ts']);
  });
});

/** The files of src/ that loading `entry` loads at once: its static imports, followed (no type-only ones). */
function loadedAtStart(entry: string): Set<string> {
  const next = new Map<string, string[]>();
  for (const { from, to, typeOnly } of imports) if (!typeOnly) next.set(from, [...(next.get(from) ?? []), to]);
  const reached = new Set<string>();
  const stack = [entry];
  for (let file = stack.pop(); file !== undefined; file = stack.pop()) {
    if (reached.has(file)) continue;
    reached.add(file);
    stack.push(...(next.get(file) ?? []));
  }
  return reached;
}

/** The cycles the imports make, each as `a -> b -> ... -> a` (one per import that closes one). */
function cyclesOf(edges: readonly Import[]): string[] {
  const next = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const { from, to } of edges) next.get(from)?.push(to);
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const to of next.get(file) ?? []) {
      if (state.get(to) === 'open') cycles.push([...path.slice(path.indexOf(to)), to].join(' -> '));
      else if (state.get(to) === undefined) visit(to);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (state.get(file) === undefined) visit(file);
  return cycles;
}

/**
 * The rooms of src/export/, lowest first. A room imports another only through that room's index.ts,
 * and only a room below it, so the rooms load in one order.
 */
const EXPORT_ROOMS = [
  'state',
  'partition',
  'kinds/collections',
  'kinds/instances',
  'kinds/datapoints',
  'kinds/subscription',
  'kinds',
  'plan',
  'check',
  'workers',
  'run',
  'inspect',
];

/**
 * The room of a file of src/export/ (`export/run/run-job.ts` -> `run`, a kind's
 * `export/kinds/datapoints/drain-points.ts` -> `kinds/datapoints`); undefined for export/index.ts.
 */
function roomOf(file: string): string | undefined {
  const parts = file.split('/');
  if (parts[0] !== 'export' || parts.length < 3) return undefined;
  return parts.slice(1, -1).join('/');
}

describe('the rooms of src/export/', () => {
  const exportFiles = files.filter((file) => file.startsWith('export/'));

  it('hold every file of the engine but its front door, each room with its own front door', () => {
    expect(exportFiles.filter((file) => file !== 'export/index.ts' && !EXPORT_ROOMS.includes(roomOf(file) ?? '')))
      .toEqual([]);
    expect(EXPORT_ROOMS.filter((room) => !files.includes(`export/${room}/index.ts`))).toEqual([]);
  });

  it('import each other only through their front doors', () => {
    const inner = imports.filter(({ from, to }) => {
      const [a, b] = [roomOf(from), roomOf(to)];
      return a !== undefined && b !== undefined && a !== b && !to.endsWith('/index.ts');
    });
    expect(inner.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('import only the rooms below them, types included', () => {
    const upwards = imports.filter(({ from, to }) => {
      const [a, b] = [roomOf(from), roomOf(to)];
      return a !== undefined && b !== undefined && EXPORT_ROOMS.indexOf(b) > EXPORT_ROOMS.indexOf(a);
    });
    expect(upwards.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('are entered from outside src/export/ only through export/index.ts', () => {
    const rooms = imports.filter(({ from, to }) => roomOf(to) !== undefined && !from.startsWith('export/'));
    expect(rooms.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });
});

/**
 * Where a stream's kind may be told apart by its name: its own room (export/kinds/), the job
 * file's schema (config/), and the record table of state/ (stream-records.ts). The engine, the
 * CLI and the metrics ask the kind (or the record table) instead.
 */
const KIND = "'(?:datapoints|instances|datapoint-subscription)'";
const KIND_NAMES = new RegExp(`[!=]==\\s*${KIND}|${KIND}\\s*[!=]==|case\\s+${KIND}\\s*:`);
const MAY_NAME_KINDS = (file: string) =>
  file.startsWith('export/kinds/') || file.startsWith('config/') || file === 'export/state/stream-records.ts';

describe('the kinds of stream', () => {
  const watched = files.filter((file) => ['export', 'cli', 'metrics'].includes(folderOf(file)));

  it('are told apart by name only in kinds/, config/ and the record table', () => {
    const found = watched
      .filter((file) => !MAY_NAME_KINDS(file))
      .flatMap((file) =>
        readFileSync(join(SRC, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => (KIND_NAMES.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(found).toEqual([]);
  });

  it('the check sees a comparison where there is one', () => {
    const named = files.filter(MAY_NAME_KINDS).filter((file) => KIND_NAMES.test(readFileSync(join(SRC, file), 'utf8')));
    expect(named).toEqual(expect.arrayContaining(['export/kinds/stream-kinds.ts', 'export/state/stream-records.ts']));
    expect(KIND_NAMES.test("if (stream.resource === 'datapoints') {")).toBe(true);
    expect(KIND_NAMES.test("case 'instances':")).toBe(true);
    expect(KIND_NAMES.test("const kind = 'datapoints';")).toBe(false);
  });
});

/** The rooms of src/simulator/: each holds one service's routes and data, entered through its index.ts. */
const SIMULATOR_ROOMS = ['datapoints', 'models'];

/** The room of a file of src/simulator/ (`simulator/models/sync-feed.ts` -> `models`); undefined outside them. */
function simulatorRoomOf(file: string): string | undefined {
  const parts = file.split('/');
  return parts[0] === 'simulator' && parts.length === 3 && SIMULATOR_ROOMS.includes(parts[1] ?? '') ? parts[1] : undefined;
}

describe('the rooms of src/simulator/', () => {
  it('each have a front door', () => {
    expect(SIMULATOR_ROOMS.filter((room) => !files.includes(`simulator/${room}/index.ts`))).toEqual([]);
  });

  it('are entered from outside each room only through its index.ts', () => {
    const inner = imports.filter(({ from, to }) => {
      const room = simulatorRoomOf(to);
      return room !== undefined && simulatorRoomOf(from) !== room && !to.endsWith('/index.ts');
    });
    expect(inner.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });
});
