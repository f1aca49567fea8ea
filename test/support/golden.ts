import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Duck, parquetAt } from './export-duckdb.js';

/**
 * Golden outputs (test/golden/golden-outputs.test.ts): what an export writes, captured as text
 * that two runs of the same build give byte for byte, kept in test/fixtures/golden/<scenario>.json
 * and compared with it. The few values that are not the build's to decide are normalised here,
 * each by one rule; the test's header lists the rules and says why each is needed. Shard bytes
 * never are.
 */

/** `GOLDEN_UPDATE=1` rewrites the fixtures instead of comparing with them. */
export const UPDATE = process.env.GOLDEN_UPDATE === '1';

const FIXTURES = fileURLToPath(new URL('../fixtures/golden/', import.meta.url));

/** A shard (an output file of rows): its bytes' sha256 and its row count. */
export interface ShardDigest {
  sha256: string;
  rows: number;
}

/**
 * A text as the fixture keeps it: its lines (split at '\n', so joined again they give it back
 * byte for byte), one a line of the fixture, so that a change to one shows as that line.
 */
export interface Text {
  lines: string[];
}

export function textOf(text: string): Text {
  return { lines: text.split('\n') };
}

/** An output folder: each shard by its sha256 and rows, every other file by its text. */
export type Files = Record<string, ShardDigest | Text>;

/** One step of a scenario: a run's whole output folder, or a command's output. */
export type Step = { step: string; files: Files } | ({ step: string } & Text);

export interface Golden {
  scenario: string;
  steps: Step[];
}

/** When a call that reads the real clock ran. */
interface Span {
  label: string;
  from: number;
  to: number;
}

/**
 * The normalisations of one scenario: its temp folder, the simulator's address, the spans of the
 * calls that read the real clock, and the Delta table ids met so far.
 */
export class Normaliser {
  private readonly spans: Span[] = [];
  private readonly tableIds = new Map<string, string>();
  private readonly roots: string[];

  /** `root`: the scenario's temp folder; `origin`: the simulator's `http://127.0.0.1:PORT`. */
  constructor(
    root: string,
    private readonly origin: string,
  ) {
    this.roots = [...new Set([realpathSync(root), root])];
  }

  /** Runs `call`, remembering when: a time in what it leaves that falls then is the real clock's. */
  async during<T>(label: string, call: () => Promise<T>): Promise<T> {
    const from = Date.now();
    try {
      return await call();
    } finally {
      this.spans.push({ label, from, to: Date.now() });
    }
  }

  /** A command's output, or a state file's text: the temp folder, the port, cursors, real times. */
  text(raw: string): string {
    let text = raw;
    for (const root of this.roots) text = text.replaceAll(root, '<tmp>');
    text = text.replaceAll(this.origin, 'http://127.0.0.1:<port>');
    // Bounded by lookarounds, not \b: a signature may end in '-', which \b would leave outside.
    text = text.replace(/(?<![\w-])([\w-]{20,})\.[\w-]{20,}(?![\w-])/g, simulatorCursor);
    return this.realTimes(text);
  }

  /**
   * A state file's text normalised. Its `digest`, if it has one, is checked as written, then
   * computed again over the normalised content, so that the kept text is a file whose digest
   * holds. A manifest's `files` (`_manifest.json`, a window's too) are sorted by path, and a Delta
   * commit's `add` and `remove` actions too; its table id is numbered.
   */
  stateFile(path: string, raw: string): string {
    const digested = DIGEST.test(raw);
    if (digested) {
      const written = JSON.parse(raw) as Record<string, unknown>;
      if (written.digest !== digestOf(written)) throw new Error(`${path}: its digest does not match its content as written`);
    }
    let text = raw;
    if (path.endsWith('_manifest.json')) text = sortedFiles(path, text);
    if (/(^|\/)_delta_log\/\d{20}\.json$/.test(path)) text = this.tableIdsNumbered(sortedActions(text));
    text = this.text(text);
    if (!digested) return text;
    const digest = digestOf(JSON.parse(text) as Record<string, unknown>);
    return text.replace(DIGEST, (field) => field.replace(/sha256:[0-9a-f]{64}/, digest));
  }

  /**
   * Times that fall while a call that reads the real clock ran become `<wall clock: CALL>`, in each
   * form the output writes times: epoch milliseconds, ISO 8601, a run folder's
   * `20260101T000000.000Z`, a run record's `2026-01-01T00-00-00.000Z`. A number that is a JSON
   * value of its own becomes a string, so that a JSON text stays JSON.
   */
  private realTimes(text: string): string {
    const replace = (all: string, ms: number, precision: 1 | 1000): string => {
      // A time written to the second falls in a span that began in that second.
      const span = this.spans.find((s) => ms >= Math.floor(s.from / precision) * precision && ms <= s.to);
      return span === undefined ? all : `<wall clock: ${span.label}>`;
    };
    const number = (all: string, at: number, whole: string): string => {
      const placed = replace(all, Number(all), 1);
      const alone = /[:,[]/.test(whole[at - 1] ?? '') && /[,}\]]/.test(whole[at + all.length] ?? '');
      return placed !== all && alone ? `"${placed}"` : placed;
    };
    const time = (all: string, ...parts: string[]) => replace(all, utc(parts), parts[6] === undefined ? 1000 : 1);
    return text
      .replace(/\b1\d{12}\b/g, number)
      .replace(/\b(\d{4})-(\d{2})-(\d{2})T(\d{2})[:-](\d{2})[:-](\d{2})(\.\d{3})?Z/g, time)
      .replace(/\b(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\.\d{3})?Z/g, time);
  }

  /** A Delta table's `metaData.id` (a random UUID) as `<table id N>`, N in the order the ids appear. */
  private tableIdsNumbered(text: string): string {
    return text.replace(/"id":"([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})"/g, (_all, id: string) => {
      const named = this.tableIds.get(id) ?? `<table id ${this.tableIds.size + 1}>`;
      this.tableIds.set(id, named);
      return `"id":"${named}"`;
    });
  }
}

const DIGEST = /"digest": ?"sha256:[0-9a-f]{64}"/;

function byPath(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A manifest's text with its `files` in the order of their paths, written as the exporter writes
 * it (JSON.stringify with 2 spaces, a newline at the end): first checked to give the text back
 * unsorted, so that sorting changes nothing but the order.
 */
function sortedFiles(path: string, text: string): string {
  const value = JSON.parse(text) as { files?: { path: string }[] };
  const write = (content: unknown) => `${JSON.stringify(content, null, 2)}\n`;
  if (write(value) !== text) throw new Error(`${path} is not written as JSON.stringify(value, null, 2) writes it`);
  if (value.files === undefined) return text;
  value.files.sort((a, b) => byPath(a.path, b.path));
  return write(value);
}

/** A Delta commit's `add` actions in the order of their paths, and its `remove` actions, in the lines they held. */
function sortedActions(text: string): string {
  const lines = text.split('\n');
  for (const kind of ['add', 'remove']) {
    const at = lines.flatMap((line, i) => (line.startsWith(`{"${kind}":`) ? [i] : []));
    const pathOf = (line: string) => (JSON.parse(line) as Record<string, { path: string }>)[kind]!.path;
    const sorted = at.map((i) => lines[i]!).sort((a, b) => byPath(pathOf(a), pathOf(b)));
    at.forEach((i, k) => (lines[i] = sorted[k]!));
  }
  return lines.join('\n');
}

/**
 * A cursor of the simulator (`<base64url JSON>.<signature>`, src/simulator/cursor.ts) as
 * `<simulator cursor VERSION BINDING POSITION ISSUED * [MARK]>`: its serial number (and so its
 * signature) left out. Anything else that looks like one stays as it is.
 */
function simulatorCursor(cursor: string, payload: string): string {
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return cursor;
  }
  if (!Array.isArray(fields) || fields[0] !== 1 || (fields.length !== 5 && fields.length !== 6)) return cursor;
  const shown = fields.map((field: unknown, i) => (i === 4 ? '*' : String(field)));
  return `<simulator cursor ${shown.join(' ')}>`;
}

/** Epoch ms of a time's parts: year, month, day, hour, minute, second, and `.mmm` or undefined. */
function utc(parts: readonly string[]): number {
  const [year = 0, month = 1, day, hour, minute, second] = parts.slice(0, 6).map(Number);
  const ms = parts[6] === undefined ? 0 : Math.round(Number(parts[6]) * 1000);
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

/**
 * The digest a state file carries, computed here the long way rather than with the exporter's
 * code: sha256 of its JSON without `digest`, every object's keys sorted (by UTF-16 code units).
 */
function digestOf(value: Record<string, unknown>): string {
  const { digest: _, ...content } = value;
  const sorted = (item: unknown): unknown => {
    if (item === null || typeof item !== 'object') return item;
    if (Array.isArray(item)) return item.map(sorted);
    const copy = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(item).sort()) copy[key] = sorted((item as Record<string, unknown>)[key]);
    return copy;
  };
  return `sha256:${createHash('sha256').update(JSON.stringify(sorted(content))).digest('hex')}`;
}

/** A shard of rows: an NDJSON or Parquet file, but not a Delta log's own checkpoint. */
function isShard(path: string): boolean {
  return !path.includes('_delta_log/') && /\.(parquet|ndjson|ndjson\.gz)$/.test(path);
}

/** Every file under `dir`, relative, with `/` separators, sorted. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

/**
 * An output folder: each shard's sha256 and rows (NDJSON: its lines; Parquet: DuckDB's count),
 * every other file's whole text, normalised.
 */
export async function captureFolder(out: string, duck: Duck, normalise: Normaliser): Promise<Files> {
  const files: Files = {};
  for (const path of filesUnder(out)) {
    const bytes = readFileSync(join(out, path));
    if (!isShard(path)) {
      files[path] = textOf(normalise.stateFile(path, bytes.toString('utf8')));
      continue;
    }
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    files[path] = { sha256, rows: await rowsOf(join(out, path), bytes, duck) };
  }
  return files;
}

async function rowsOf(path: string, bytes: Buffer, duck: Duck): Promise<number> {
  if (path.endsWith('.parquet')) {
    const { n } = await duck.one(`SELECT count(*)::INTEGER AS n FROM ${parquetAt([path])}`);
    return Number(n);
  }
  if (path.endsWith('.gz')) throw new Error(`${path}: gzip NDJSON is not captured (the scenarios write plain NDJSON)`);
  return bytes.toString('utf8').split('\n').filter((line) => line !== '').length;
}

/** The fixture's text: pretty JSON, one line of a kept text a line, so a change shows where it is. */
export function goldenText(golden: Golden): string {
  return `${JSON.stringify(golden, null, 2)}\n`;
}

/**
 * Compares a scenario with its fixture byte for byte, or writes the fixture (GOLDEN_UPDATE=1).
 * Returns what differs, step by step and file by file; empty when nothing does.
 */
export function checkGolden(golden: Golden): string[] {
  const file = join(FIXTURES, `${golden.scenario}.json`);
  const text = goldenText(golden);
  if (UPDATE) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return [];
  }
  if (!existsSync(file)) return [`${file} is missing: write it with GOLDEN_UPDATE=1 npx vitest run test/golden`];
  const kept = readFileSync(file, 'utf8');
  if (kept === text) return [];
  const differences = diffGolden(JSON.parse(kept) as Golden, golden);
  // Equal values that are not equal bytes (the fixture edited by hand): say so rather than nothing.
  return differences.length > 0 ? differences : [`${file}: the same values, other bytes (formatting)`];
}

/** What differs between the fixture and now, each with the lines that changed. */
export function diffGolden(kept: Golden, now: Golden): string[] {
  const found: string[] = [];
  const joined = (text: Text) => text.lines.join('\n');
  for (let i = 0; i < Math.max(kept.steps.length, now.steps.length); i++) {
    const [a, b] = [kept.steps[i], now.steps[i]];
    const at = `step ${i + 1} (${b?.step ?? a?.step})`;
    if (a === undefined || b === undefined) {
      found.push(`${at}: ${a === undefined ? 'new, not in the fixture' : 'in the fixture, not made now'}`);
      continue;
    }
    if (a.step !== b.step) found.push(`${at}: was '${a.step}'`);
    if ('lines' in a || 'lines' in b) {
      const [x, y] = ['lines' in a ? joined(a) : '', 'lines' in b ? joined(b) : ''];
      if (x !== y) found.push(`${at}:\n${lineDiff(x, y)}`);
      continue;
    }
    for (const path of [...new Set([...Object.keys(a.files), ...Object.keys(b.files)])].sort()) {
      const [x, y] = [a.files[path], b.files[path]];
      if (x === undefined) found.push(`${at}: ${path} is new: ${JSON.stringify(y)}`);
      else if (y === undefined) found.push(`${at}: ${path} is gone (was ${JSON.stringify(x)})`);
      else if ('lines' in x && 'lines' in y) {
        if (joined(x) !== joined(y)) found.push(`${at}: ${path} differs:\n${lineDiff(joined(x), joined(y))}`);
      } else if (JSON.stringify(x) !== JSON.stringify(y)) {
        found.push(`${at}: ${path} was ${JSON.stringify(x)}, now ${JSON.stringify(y)}`);
      }
    }
  }
  return found;
}

/** JSON pretty-printed (for the diff only: the comparison is of the bytes); other text as it is. */
function linesOf(text: string): string[] {
  try {
    return JSON.stringify(JSON.parse(text), null, 2).split('\n');
  } catch {
    return text.split('\n');
  }
}

/** The lines that differ, `-` the fixture's and `+` now's, with a line of context each side. */
export function lineDiff(before: string, after: string): string {
  const [a, b] = [linesOf(before), linesOf(after)];
  if (a.join('\n') === b.join('\n')) return '    (the same when pretty-printed: the bytes differ in formatting)';
  // The longest common subsequence of lines: the texts here are at most a few thousand lines.
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: { mark: string; line: string }[] = [];
  let [i, j] = [0, 0];
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ mark: ' ', line: a[i]! });
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push({ mark: '+', line: b[j++]! });
    } else {
      out.push({ mark: '-', line: a[i++]! });
    }
  }
  const near = (k: number) => [k - 1, k, k + 1].some((n) => out[n] !== undefined && out[n].mark !== ' ');
  const shown = out.map((entry, k) => (near(k) ? `    ${entry.mark} ${entry.line}` : undefined));
  const lines = shown
    .filter((line, k) => line !== undefined || shown[k - 1] !== undefined)
    .map((line) => (line === undefined ? '    ...' : line.length > 300 ? `${line.slice(0, 300)}...` : line));
  return lines.slice(0, 60).join('\n') + (lines.length > 60 ? `\n    ... (${lines.length - 60} more lines)` : '');
}
