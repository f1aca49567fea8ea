import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunRecord, writeRunRecord } from '../../src/export/run/run-records.js';
import { silentLogger } from '../../src/log.js';
import { readEarlierRuns } from '../../src/metrics/earlier-runs.js';
import { createLocalStore } from '../../src/output/local-store.js';
import { loadJob, removeTempDirs, tempDir } from '../support/export-harness.js';

afterEach(removeTempDirs);

function ended(at: string, exitCode: number): RunRecord {
  return {
    exitCode,
    state: exitCode === 0 ? 'complete' : 'failed',
    reason: exitCode === 0 ? null : { code: 'E_NETWORK', message: 'reset' },
    destination: '/out',
    startedAt: at,
    finishedAt: at,
    durationMs: 1000,
    requests: 1,
    retries: 0,
    throttled: 0,
    rowsThisRun: 0,
    streams: [],
    errors: [],
    verified: null,
  };
}

describe('readEarlierRuns: where a run\'s metrics start', () => {
  function job() {
    const dir = tempDir('bulk-extract-earlier-runs-');
    const out = join(dir, 'out');
    const config = loadJob(dir, { baseUrl: 'https://acme.example.com/api/v1/projects/demo', out, streams: [{ resource: 'events' }] });
    return { config, store: createLocalStore(out, silentLogger) };
  }

  it('a worker\'s share complete is no success of the job until the split job is finalized', async () => {
    const { config, store } = job();
    await writeRunRecord(store, ended('2026-11-20T01:00:00.000Z', 0));
    const worker = { index: 1, count: 2 };
    await writeRunRecord(store, { ...ended('2026-11-21T01:00:00.000Z', 0), jobComplete: false }, { worker });
    // Of an earlier version: no jobComplete, a worker's record.
    await writeRunRecord(store, ended('2026-11-21T02:00:00.000Z', 0), { worker: { index: 0, count: 2 } });
    expect(await readEarlierRuns(config, silentLogger)).toMatchObject({ lastExitCode: 0, lastSuccessMs: Date.parse('2026-11-20T01:00:00.000Z') });
    await writeRunRecord(store, { ...ended('2026-11-21T03:00:00.000Z', 0), jobComplete: true }, { worker });
    expect(await readEarlierRuns(config, silentLogger)).toMatchObject({ lastSuccessMs: Date.parse('2026-11-21T03:00:00.000Z') });
    // A whole run of --stream X: exit 0, the job not complete.
    await writeRunRecord(store, { ...ended('2026-11-22T01:00:00.000Z', 0), state: 'incomplete', jobComplete: false });
    expect(await readEarlierRuns(config, silentLogger)).toMatchObject({ lastSuccessMs: Date.parse('2026-11-21T03:00:00.000Z') });
  });

  it('no output yet: nothing known', async () => {
    expect(await readEarlierRuns(job().config, silentLogger)).toEqual({});
  });

  it('the newest record is the last run; the newest that exited 0 is the last success, older failures aside', async () => {
    const { config, store } = job();
    await writeRunRecord(store, ended('2026-11-20T01:00:00.000Z', 1));
    await writeRunRecord(store, ended('2026-11-21T01:00:00.000Z', 0));
    await writeRunRecord(store, ended('2026-11-22T01:00:00.000Z', 1));
    await writeRunRecord(store, ended('2026-11-23T01:00:00.000Z', 130));
    expect(await readEarlierRuns(config, silentLogger)).toEqual({
      lastExitCode: 130,
      lastEndMs: Date.parse('2026-11-23T01:00:00.000Z'),
      lastCode: 'E_NETWORK',
      lastSuccessMs: Date.parse('2026-11-21T01:00:00.000Z'),
    });
    await writeRunRecord(store, ended('2026-11-24T01:00:00.000Z', 0));
    expect(await readEarlierRuns(config, silentLogger)).toEqual({
      lastExitCode: 0,
      lastEndMs: Date.parse('2026-11-24T01:00:00.000Z'),
      lastCode: 'none',
      lastSuccessMs: Date.parse('2026-11-24T01:00:00.000Z'),
    });
  });

  it('a run refused by the lock (exit 75, E_LOCKED) is passed over: the last run is the one before it', async () => {
    const { config, store } = job();
    await writeRunRecord(store, ended('2026-11-20T01:00:00.000Z', 0));
    await writeRunRecord(store, ended('2026-11-21T01:00:00.000Z', 1));
    const overlap = { ...ended('2026-11-21T02:00:00.000Z', 75), state: 'refused' as const, reason: { code: 'E_LOCKED', message: 'in use' } };
    await writeRunRecord(store, { ...overlap, startedAt: null, finishedAt: null, durationMs: null }, {
      now: () => Date.parse('2026-11-21T02:00:00.000Z'),
    });
    expect(await readEarlierRuns(config, silentLogger)).toMatchObject({
      lastExitCode: 1,
      lastEndMs: Date.parse('2026-11-21T01:00:00.000Z'),
      lastSuccessMs: Date.parse('2026-11-20T01:00:00.000Z'),
    });
    // Another refusal (drift) is a run that ended, with its code.
    const drift = { ...overlap, exitCode: 2, reason: { code: 'E_CHECKPOINT', message: 'drift' } };
    await writeRunRecord(store, { ...drift, startedAt: null, finishedAt: null, durationMs: null }, {
      now: () => Date.parse('2026-11-21T03:00:00.000Z'),
    });
    expect(await readEarlierRuns(config, silentLogger)).toMatchObject({ lastExitCode: 2 });
  });

  it('only failures: the last exit code, its end and error code, no success', async () => {
    const { config, store } = job();
    await writeRunRecord(store, ended('2026-11-20T01:00:00.000Z', 2));
    expect(await readEarlierRuns(config, silentLogger)).toEqual({
      lastExitCode: 2,
      lastEndMs: Date.parse('2026-11-20T01:00:00.000Z'),
      lastCode: 'E_NETWORK',
    });
  });

  it('a refused run (no finishedAt) ended when its record says, from its name', async () => {
    const { config, store } = job();
    const refused = { ...ended('2026-11-20T01:00:00.000Z', 3), startedAt: null, finishedAt: null, reason: { code: 'E_AUTH', message: 'no' } };
    await writeRunRecord(store, refused, { now: () => Date.parse('2026-11-20T02:00:00.000Z') });
    expect(await readEarlierRuns(config, silentLogger)).toEqual({
      lastExitCode: 3,
      lastEndMs: Date.parse('2026-11-20T02:00:00.000Z'),
      lastCode: 'E_AUTH',
    });
  });
});
