import { DeltaLogError } from '../../errors.js';
import type { DeltaProtocol } from './actions.js';

/** The highest reader version this reader knows: 3, where a table lists its reader features by name. */
const MAX_READER_VERSION = 3;

/**
 * The reader features whose tables this reader replays correctly: they change how the data files'
 * values are read or what vacuum may do, never which files the log makes active or how many rows
 * they hold. Deletion vectors, column mapping and v2 checkpoints do, and are refused.
 */
const UNDERSTOOD_FEATURES: ReadonlySet<string> = new Set(['timestampNtz', 'vacuumProtocolCheck']);

/** Reader version 2 is column mapping without the name (PROTOCOL.md, "Table Features"). */
const FEATURES_OF_VERSION_2 = ['columnMapping'];

/** Refuses a table this reader cannot replay correctly, naming the version or feature; `where` names the log. */
export function assertReadable(protocol: DeltaProtocol, where: string): void {
  const version = protocol.minReaderVersion;
  if (version > MAX_READER_VERSION) {
    throw new DeltaLogError(
      `${where}: the table needs a reader of version ${version} (minReaderVersion); this reader supports up to ${MAX_READER_VERSION}`,
    );
  }
  const features = version === 3 ? protocol.readerFeatures ?? [] : version === 2 ? FEATURES_OF_VERSION_2 : [];
  const unknown = features.filter((feature) => !UNDERSTOOD_FEATURES.has(feature));
  if (unknown.length > 0) {
    throw new DeltaLogError(
      `${where}: the table needs the reader feature${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}, ` +
      `which this reader does not support (it supports ${[...UNDERSTOOD_FEATURES].join(', ')})`,
    );
  }
}
