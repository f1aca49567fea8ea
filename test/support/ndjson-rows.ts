import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * Every line of every NDJSON shard (plain or gzip) in a stream's partition folders, parsed; with
 * `committedOnly`, of the shards in place only (not a `.inprogress` file a stopped run left).
 */
export function ndjsonRows(streamDir: string, committedOnly = false): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const part of readdirSync(streamDir)) {
    for (const name of readdirSync(join(streamDir, part))) {
      if (!name.includes('.ndjson') || (committedOnly && !/\.ndjson(\.gz)?$/u.test(name))) continue;
      const bytes = readFileSync(join(streamDir, part, name));
      const text = (name.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
      for (const line of text.split('\n')) if (line !== '') rows.push(JSON.parse(line) as Record<string, unknown>);
    }
  }
  return rows;
}

/** Whether a stream's partition folders hold a shard in place whose name ends with `extension`. */
export function hasShards(streamDir: string, extension: string): boolean {
  const parts = readdirSync(streamDir);
  return parts.some((part) => readdirSync(join(streamDir, part)).some((name) => name.endsWith(extension)));
}
