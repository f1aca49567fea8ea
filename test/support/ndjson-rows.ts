import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/** Every line of every NDJSON shard (plain or gzip) in a stream's partition folders, parsed. */
export function ndjsonRows(streamDir: string): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const part of readdirSync(streamDir)) {
    for (const name of readdirSync(join(streamDir, part))) {
      if (!name.includes('.ndjson')) continue;
      const bytes = readFileSync(join(streamDir, part, name));
      const text = (name.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
      for (const line of text.split('\n')) if (line !== '') rows.push(JSON.parse(line) as Record<string, unknown>);
    }
  }
  return rows;
}
