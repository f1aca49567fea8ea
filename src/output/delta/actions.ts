import { DeltaLogError } from '../../errors.js';

/**
 * The actions of a Delta log this reader applies (delta-io/delta PROTOCOL.md, "Actions"), checked
 * for the fields the replay relies on. Fields it does not use are kept out, as the protocol asks
 * readers to ignore what they do not know.
 */

export interface DeltaProtocol {
  minReaderVersion: number;
  minWriterVersion: number;
  readerFeatures?: string[];
  writerFeatures?: string[];
}

export interface DeltaMetaData {
  id: string;
  name?: string;
  description?: string;
  format: { provider: string; options: Record<string, string> };
  /** The table's schema, a JSON string as the log holds it. */
  schemaString?: string;
  /** `schemaString` parsed: the protocol's struct type (`{type: 'struct', fields: [...]}`). */
  schema?: unknown;
  partitionColumns: string[];
  configuration: Record<string, string>;
  createdTime?: number;
}

/** `stats` of an add, parsed from its JSON string; each member only when the writer collected it. */
export interface DeltaFileStats {
  numRecords?: number;
  minValues?: Record<string, unknown>;
  maxValues?: Record<string, unknown>;
  nullCount?: Record<string, unknown>;
}

export interface DeltaAdd {
  /** As the log holds it: a URI relative to the table's root. */
  path: string;
  partitionValues: Record<string, string | null>;
  size: number;
  modificationTime: number;
  dataChange: boolean;
  stats?: DeltaFileStats;
  /** `stats` as the log holds it, the JSON text: written back as it is (a long beyond 2^53 stays exact). */
  statsText?: string;
}

export interface DeltaRemove {
  path: string;
  deletionTimestamp?: number;
  dataChange: boolean;
}

export interface DeltaTxn {
  appId: string;
  version: number;
  lastUpdated?: number;
}

export type DeltaAction =
  | { protocol: DeltaProtocol } |
  { metaData: DeltaMetaData } |
  { add: DeltaAdd } |
  { remove: DeltaRemove } |
  { txn: DeltaTxn } |
  { commitInfo: Record<string, unknown> };

type Fields = Record<string, unknown>;

/**
 * The action of one line of a commit (or one row of a checkpoint), `where` naming it for errors;
 * undefined for an action this reader has no use for (cdc, domainMetadata, ...).
 */
export function actionOf(record: unknown, where: string): DeltaAction | undefined {
  if (!isFields(record)) throw new DeltaLogError(`${where}: not a JSON object`);
  const keys = Object.keys(record).filter((key) => record[key] !== null && record[key] !== undefined);
  if (keys.length !== 1) throw new DeltaLogError(`${where}: holds ${keys.length} actions (${keys.join(', ')}), not one`);
  const [key] = keys as [string];
  const body = record[key];
  if (!isFields(body)) throw new DeltaLogError(`${where}: ${key} is not an object`);
  const at = `${where}: ${key}`;
  switch (key) {
    case 'protocol':
      return { protocol: protocolOf(body, at) };
    case 'metaData':
      return { metaData: metaDataOf(body, at) };
    case 'add':
      return { add: addOf(body, at) };
    case 'remove':
      return { remove: removeOf(body, at) };
    case 'txn':
      return { txn: txnOf(body, at) };
    case 'commitInfo':
      return { commitInfo: body };
    default:
      return undefined;
  }
}

function protocolOf(body: Fields, at: string): DeltaProtocol {
  return {
    minReaderVersion: integer(body, 'minReaderVersion', at),
    minWriterVersion: integer(body, 'minWriterVersion', at),
    ...optional('readerFeatures', strings(body, 'readerFeatures', at)),
    ...optional('writerFeatures', strings(body, 'writerFeatures', at)),
  };
}

function metaDataOf(body: Fields, at: string): DeltaMetaData {
  const format = body.format;
  if (!isFields(format) || typeof format.provider !== 'string') throw new DeltaLogError(`${at}.format has no provider`);
  const schemaString = optionalString(body, 'schemaString', at);
  return {
    id: text(body, 'id', at),
    ...optional('name', optionalString(body, 'name', at)),
    ...optional('description', optionalString(body, 'description', at)),
    format: { provider: format.provider, options: stringMap(format, 'options', at) },
    ...optional('schemaString', schemaString),
    ...optional('schema', schemaString === undefined ? undefined : parsed(schemaString, `${at}.schemaString`)),
    partitionColumns: strings(body, 'partitionColumns', at) ?? [],
    configuration: stringMap(body, 'configuration', at),
    ...optional('createdTime', optionalInteger(body, 'createdTime', at)),
  };
}

function addOf(body: Fields, at: string): DeltaAdd {
  const stats = optionalString(body, 'stats', at);
  return {
    path: text(body, 'path', at),
    partitionValues: partitionValuesOf(body, at),
    size: integer(body, 'size', at),
    modificationTime: integer(body, 'modificationTime', at),
    dataChange: flag(body, 'dataChange', at),
    ...optional('stats', stats === undefined ? undefined : statsOf(stats, `${at}.stats`)),
    ...optional('statsText', stats),
  };
}

function removeOf(body: Fields, at: string): DeltaRemove {
  return {
    path: text(body, 'path', at),
    ...optional('deletionTimestamp', optionalInteger(body, 'deletionTimestamp', at)),
    dataChange: flag(body, 'dataChange', at),
  };
}

function txnOf(body: Fields, at: string): DeltaTxn {
  return {
    appId: text(body, 'appId', at),
    version: integer(body, 'version', at),
    ...optional('lastUpdated', optionalInteger(body, 'lastUpdated', at)),
  };
}

function statsOf(json: string, at: string): DeltaFileStats {
  const stats = parsed(json, at);
  if (!isFields(stats)) throw new DeltaLogError(`${at} is not a JSON object`);
  const records = stats.numRecords;
  if (records !== undefined && !(Number.isSafeInteger(records) && (records as number) >= 0)) {
    throw new DeltaLogError(`${at}.numRecords is ${JSON.stringify(records)}, not a count`);
  }
  const member = (name: string) => {
    const value = stats[name];
    if (value !== undefined && !isFields(value)) throw new DeltaLogError(`${at}.${name} is not an object`);
    return value;
  };
  return {
    ...optional('numRecords', records as number | undefined),
    ...optional('minValues', member('minValues')),
    ...optional('maxValues', member('maxValues')),
    ...optional('nullCount', member('nullCount')),
  };
}

/** A partition's value is a string, or null for a null partition value. */
function partitionValuesOf(body: Fields, at: string): Record<string, string | null> {
  const values = body.partitionValues;
  if (!isFields(values)) throw new DeltaLogError(`${at}.partitionValues is not an object`);
  for (const [name, value] of Object.entries(values)) {
    if (value !== null && typeof value !== 'string') throw new DeltaLogError(`${at}.partitionValues.${name} is not a string`);
  }
  return values as Record<string, string | null>;
}

function parsed(json: string, at: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new DeltaLogError(`${at} is not JSON (${(error as Error).message})`);
  }
}

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{[name]: value}` when value is defined, else nothing: optional members stay absent, never undefined. */
function optional<K extends string, V>(name: K, value: V | undefined): { [key in K]?: V } {
  return value === undefined ? {} : ({ [name]: value } as { [key in K]: V });
}

function text(body: Fields, name: string, at: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value === '') throw new DeltaLogError(`${at}.${name} is missing or not a string`);
  return value;
}

function optionalString(body: Fields, name: string, at: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new DeltaLogError(`${at}.${name} is not a string`);
  return value;
}

function integer(body: Fields, name: string, at: string): number {
  const value = optionalInteger(body, name, at);
  if (value === undefined) throw new DeltaLogError(`${at}.${name} is missing`);
  return value;
}

function optionalInteger(body: Fields, name: string, at: string): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (!Number.isSafeInteger(value)) throw new DeltaLogError(`${at}.${name} is ${JSON.stringify(value)}, not an integer`);
  return value as number;
}

function flag(body: Fields, name: string, at: string): boolean {
  const value = body[name];
  if (typeof value !== 'boolean') throw new DeltaLogError(`${at}.${name} is missing or not a boolean`);
  return value;
}

function strings(body: Fields, name: string, at: string): string[] | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((each) => typeof each === 'string')) {
    throw new DeltaLogError(`${at}.${name} is not a list of strings`);
  }
  return value;
}

function stringMap(body: Fields, name: string, at: string): Record<string, string> {
  const value = body[name];
  if (value === undefined || value === null) return {};
  if (!isFields(value) || !Object.values(value).every((each) => typeof each === 'string')) {
    throw new DeltaLogError(`${at}.${name} is not a map of strings`);
  }
  return value as Record<string, string>;
}
