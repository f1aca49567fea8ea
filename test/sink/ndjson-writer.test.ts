import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { NdjsonWriter } from '../../src/sink/ndjson-writer.js';
import { asNumber, ndjsonAt, openDuck } from '../support/export-duckdb.js';
import { removeTempDirs, sha256File, tempDir } from '../support/export-harness.js';

type Item = Record<string, unknown>;

afterEach(removeTempDirs);

/** Items with varied, poorly compressible text, so gzip output flows while appending. */
function items(count: number, from = 0): Item[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return {
      id: 5_000_000_000_000_000 + i * 7919,
      externalId: `EV-${i.toString(36)}`,
      description: `${Math.sin(i).toString(36)} 東京 🛢️ "q" \\ \n ${i}`,
      metadata: { [`k${i % 13}`]: (i * 2654435761).toString(16), 温度: `${i}°C` },
      assetIds: i % 5 === 0 ? [] : [i, i + 1],
    };
  });
}

const linesOf = (list: readonly Item[]) => list.map((item) => `${JSON.stringify(item)}\n`).join('');

async function write(path: string, gzip: boolean, pages: readonly (readonly Item[])[]) {
  const writer = await NdjsonWriter.create(path, gzip);
  for (const page of pages) await writer.append(page);
  return { writer, committed: await writer.commit() };
}

describe('NdjsonWriter, plain', () => {
  it('writes one JSON line per item, exactly, in order', async () => {
    const dir = tempDir('bulk-extract-ndjson-');
    const path = join(dir, '000000.ndjson');
    const pages = [items(3), items(0, 3), items(500, 3)];
    const { committed } = await write(path, false, pages);
    expect(readFileSync(path, 'utf8')).toBe(linesOf(pages.flat()));
    expect(committed).toMatchObject({ path, format: 'ndjson', rows: 503 });
  });

  it('commit() reports the bytes and sha256 of the file and leaves no .inprogress', async () => {
    const dir = tempDir('bulk-extract-ndjson-');
    const path = join(dir, '000000.ndjson');
    const { writer, committed } = await write(path, false, [items(1000), items(1000, 1000)]);
    expect(readdirSync(dir)).toEqual(['000000.ndjson']);
    expect(committed.bytes).toBe(statSync(path).size);
    expect(committed.bytes).toBe(Buffer.byteLength(linesOf([...items(1000), ...items(1000, 1000)])));
    expect(committed.sha256).toBe(sha256File(path));
    expect(writer.rows).toBe(2000);
  });

  it('rows and bytes grow as pages are appended (the shard rotation reads them)', async () => {
    const dir = tempDir('bulk-extract-ndjson-');
    const writer = await NdjsonWriter.create(join(dir, 'a.ndjson'), false);
    await writer.append(items(10));
    expect(writer.rows).toBe(10);
    expect(writer.bytes).toBe(Buffer.byteLength(linesOf(items(10))));
    await writer.append([]);
    expect(writer.rows).toBe(10);
    await writer.append(items(5, 10));
    expect(writer.rows).toBe(15);
    expect(writer.bytes).toBe(Buffer.byteLength(linesOf(items(15))));
    await writer.abort();
  });

  it('unicode, quotes, backslashes and newlines inside values stay inside one line each', async () => {
    const dir = tempDir('bulk-extract-ndjson-');
    const path = join(dir, 'u.ndjson');
    const tricky = [{ id: 1, a: 'line\nbreak', b: '\u2028\u2029', c: '🇳🇴 東京 e\u0301', d: '"\\' }];
    await write(path, false, [tricky]);
    const text = readFileSync(path, 'utf8');
    expect(text.split('\n')).toHaveLength(2);
    expect(JSON.parse(text.split('\n')[0]!)).toEqual(tricky[0]);
  });

  it('abort() leaves no file (neither final nor .inprogress)', async () => {
    const dir = tempDir('bulk-extract-ndjson-');
    const writer = await NdjsonWriter.create(join(dir, '000000.ndjson'), false);
    await writer.append(items(100));
    expect(readdirSync(dir)).toEqual(['000000.ndjson.inprogress']);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('NdjsonWriter, gzip', () => {
  it('the file gunzips to exactly the lines; bytes and sha256 match the compressed file', async () => {
    const dir = tempDir('bulk-extract-ndjson-');
    const path = join(dir, '000000.ndjson.gz');
    const all = items(20_000);
    const pages = Array.from({ length: 20 }, (_, p) => all.slice(p * 1000, (p + 1) * 1000));
    const { committed, writer } = await write(path, true, pages);
    const raw = readFileSync(path);
    expect(gunzipSync(raw).toString('utf8')).toBe(linesOf(all));
    expect(committed).toMatchObject({ path, format: 'ndjson', rows: 20_000 });
    expect(committed.bytes).toBe(raw.length);
    expect(committed.sha256).toBe(sha256File(path));
    expect(writer.bytes).toBe(raw.length);
    expect(raw.length).toBeLessThan(Buffer.byteLength(linesOf(all)));
    expect(readdirSync(dir)).toEqual(['000000.ndjson.gz']);
  });

  it('DuckDB reads the gzip file', async () => {
    const dir = tempDir('bulk-extract-ndjson-');
    const path = join(dir, '000000.ndjson.gz');
    await write(path, true, [items(700), items(300, 700)]);
    const duck = await openDuck();
    try {
      const row = await duck.one(`SELECT count(*) AS c, count(DISTINCT id) AS d FROM ${ndjsonAt(path)}`);
      expect([asNumber(row.c), asNumber(row.d)]).toEqual([1000, 1000]);
    } finally {
      duck.close();
    }
  });

  it('a shard without rows is a valid empty gzip file', async () => {
    const dir = tempDir('bulk-extract-ndjson-');
    const path = join(dir, 'e.ndjson.gz');
    const { committed } = await write(path, true, []);
    expect(gunzipSync(readFileSync(path)).length).toBe(0);
    expect(committed.rows).toBe(0);
    expect(committed.bytes).toBe(statSync(path).size);
  });

  it('abort() leaves no file, also while gzip output is in flight', async () => {
    const dir = tempDir('bulk-extract-ndjson-');
    const writer = await NdjsonWriter.create(join(dir, '000000.ndjson.gz'), true);
    await writer.append(items(5000));
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('two gzip writers at once each get their own stream', async () => {
    const dir = tempDir('bulk-extract-ndjson-');
    const a = await NdjsonWriter.create(join(dir, 'a.ndjson.gz'), true);
    const b = await NdjsonWriter.create(join(dir, 'b.ndjson.gz'), true);
    const pagesA = [items(800), items(800, 800)];
    const pagesB = [items(500, 5000), items(500, 5500)];
    await Promise.all([a.append(pagesA[0]!), b.append(pagesB[0]!)]);
    await Promise.all([a.append(pagesA[1]!), b.append(pagesB[1]!)]);
    const [ca, cb] = await Promise.all([a.commit(), b.commit()]);
    expect(gunzipSync(readFileSync(ca.path)).toString('utf8')).toBe(linesOf(pagesA.flat()));
    expect(gunzipSync(readFileSync(cb.path)).toString('utf8')).toBe(linesOf(pagesB.flat()));
  });
});
