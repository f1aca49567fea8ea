import { afterEach, describe, expect, it } from 'vitest';
import { aggregateFilter } from '../../src/export/kinds/collections/chain-request.js';
import { runJob } from '../../src/export/run/run-job.js';
import type { RunHandle } from '../../src/export/run/run-progress.js';
import { silentLogger } from '../../src/log.js';
import { startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { closedForm, expectExactOutput } from '../support/resume-harness.js';
import { proxiedJob } from '../support/proxied-job.js';

/**
 * The count aggregate gives progress its total; the export never relies on
 * it: with a count far off, every row is still exported, and the progress total is what the
 * platform said.
 */
const KEY = 'count-streams-key-0001';
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('aggregateFilter', () => {
  it.each([
    ['limit and partition are not filters', [['limit', '1000'], ['partition', '1/10']], {}],
    ['time bounds become inclusive ranges', [['minLastUpdatedTime', '5'], ['maxLastUpdatedTime', '9'], ['maxStartTime', '7']], {
      lastUpdatedTime: { min: 5, max: 9 },
      startTime: { max: 7 },
    }],
    ['strings stay strings', [['type', 'alarm'], ['subtype', 'high'], ['source', 'scada']], { type: 'alarm', subtype: 'high', source: 'scada' }],
  ] as const)('%s', (_, params, filter) => {
    expect(aggregateFilter('events', params)).toEqual(filter);
  });
});

describe('an export whose count is far off', () => {
  it('exports every row anyway; progress shows the count the platform gave', async () => {
    const sim = await startSimulator({ events: 2500, seed: 12, apiKeys: [KEY] });
    const job = await proxiedJob({
      sim,
      key: KEY,
      answer: (request) => (request.method === 'POST' ? { body: { items: [{ count: 40 }] } } : undefined),
      streams: [{ resource: 'events', partitions: 2, limit: 1000 }],
      output: { formats: ['parquet', 'ndjson'], parquet: { rowGroupRows: 1000 } },
    });
    cleanup.push(() => sim.close(), () => job.close());
    const { config, out, proxy } = job;
    let handle: RunHandle | undefined;
    const onStart = (run: RunHandle) => {
      handle = run;
    };
    const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(), onStart });
    expect(result.state).toBe('complete');
    expect(handle?.streams()).toEqual([{ name: 'events', rows: 2500, total: 40, partitions: 2, done: 2 }]);
    // The count request carried the run's filter: the pin of a full export.
    const body = proxy.requests.find((r) => r.method === 'POST')?.body ?? '{}';
    const counted = JSON.parse(body) as { filter: { lastUpdatedTime: { max: number } } };
    expect(counted.filter.lastUpdatedTime.max).toEqual(expect.any(Number));
    const ids = closedForm('events', 2500);
    await expectExactOutput(out, [{ name: 'events', resource: 'events', partitions: 2, formats: ['parquet', 'ndjson'], ids }]);
  });
});

describe('an export whose count the gateway does not pass (404 on the count alone)', () => {
  it('exports every row, without a total: the one-item list that follows the 404 answers, so nothing refuses the run', async () => {
    const sim = await startSimulator({ events: 1200, seed: 13, apiKeys: [KEY] });
    const job = await proxiedJob({
      sim,
      key: KEY,
      answer: (request) => (request.method === 'POST' ? { status: 404, body: { error: { code: 404, message: 'Not Found' } } } : undefined),
      streams: [{ resource: 'events', partitions: 2, limit: 1000 }],
      output: { formats: ['ndjson'] },
    });
    cleanup.push(() => sim.close(), () => job.close());
    let handle: RunHandle | undefined;
    const onStart = (run: RunHandle) => {
      handle = run;
    };
    const result = await runJob({ config: job.config, logger: silentLogger, clock: createFakeClock(), onStart });
    expect(result.state).toBe('complete');
    expect(handle?.streams()).toEqual([{ name: 'events', rows: 1200, total: undefined, partitions: 2, done: 2 }]);
  });
});
