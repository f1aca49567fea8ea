/**
 * The platform's bounds on a `metadata` filter, which are those of the items' metadata: its API
 * reference gives every collection keys of at most 128 bytes and at most 256 pairs; values and the
 * total size of keys and values differ by collection (MapFilterSpec.limits). Bytes are UTF-8.
 */
export const METADATA_MAX_PAIRS = 256;
export const METADATA_MAX_KEY_BYTES = 128;

/** A collection's own bounds on metadata, where the platform documents them. */
export interface MetadataLimits {
  /** The longest value, in UTF-8 bytes. */
  readonly maxValueBytes?: number;
  /** The most bytes of all keys and values together. */
  readonly maxTotalBytes?: number;
}

/** Keys shown in a message are cut to this many characters. */
const SHOWN_KEY = 40;

/**
 * What in a metadata filter the platform would refuse, one message each, naming the key at fault:
 * too many pairs, a key or a value too long, or too many bytes in all. Empty when it takes it.
 */
export function metadataLimitProblems(pairs: Readonly<Record<string, string>>, limits: MetadataLimits): string[] {
  const problems: string[] = [];
  const entries = Object.entries(pairs);
  if (entries.length > METADATA_MAX_PAIRS) {
    problems.push(`${entries.length} pairs; the platform takes at most ${METADATA_MAX_PAIRS}`);
  }
  let total = 0;
  for (const [key, value] of entries) {
    const keyBytes = Buffer.byteLength(key, 'utf8');
    const valueBytes = Buffer.byteLength(value, 'utf8');
    total += keyBytes + valueBytes;
    if (keyBytes > METADATA_MAX_KEY_BYTES) {
      problems.push(`the key ${shown(key)} is ${keyBytes} bytes (UTF-8); the platform takes keys of at most ${METADATA_MAX_KEY_BYTES}`);
    }
    if (limits.maxValueBytes !== undefined && valueBytes > limits.maxValueBytes) {
      problems.push(`the value of ${shown(key)} is ${valueBytes} bytes (UTF-8); the platform takes values of at most ${limits.maxValueBytes}`);
    }
  }
  if (limits.maxTotalBytes !== undefined && total > limits.maxTotalBytes) {
    problems.push(`its keys and values are ${total} bytes (UTF-8) in all; the platform takes at most ${limits.maxTotalBytes}`);
  }
  return problems;
}

function shown(key: string): string {
  const chars = [...key];
  return JSON.stringify(chars.length <= SHOWN_KEY ? key : `${chars.slice(0, SHOWN_KEY).join('')}…`);
}
