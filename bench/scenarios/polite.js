// Scenario 6, polite at the platform's limits: the simulator allows 20 list requests/s and 10 in
// flight and answers the excess with 429 and no Retry-After. An NDJSON export with n = 10 and
// concurrency 10. Target: at least 90% of the allowed rate achieved (successful requests/s) with
// at most 5% of all requests answered 429. The counts come from the export's own manifest.
import { fmt, runExport, table, withSimulator } from '../lib/harness.js';

export const title = 'Polite at the platform\'s limits (scenario 6)';

export async function run({ events = 600_000, maxRps = 20, maxConcurrent = 10, partitions = 10 } = {}) {
  return withSimulator({ events, faults: { maxRps, maxConcurrent } }, async (sim) => {
    const result = await runExport(
      sim,
      { partitions, concurrency: partitions, formats: ['ndjson'] },
      { expectRows: events },
    );
    const { requests } = result.manifest;
    // Builds before the adaptive limiter do not count 429s; the only failed answers here are 429s,
    // and every successful answer is one page (n partitions of limit 1000).
    const pages = Array.from({ length: partitions }, (_, i) => partitionSize(events, partitions, i))
      .reduce((sum, size) => sum + Math.max(1, Math.ceil(size / 1000)), 0);
    const throttled = result.manifest.throttled ?? requests - pages;
    const successes = requests - throttled;
    const achieved = successes / result.wallS / maxRps;
    const share429 = throttled / requests;
    const markdown = [
      `${fmt.int(events)} events, NDJSON, n = ${partitions}, concurrency ${partitions}; the simulator allows ` +
      `${maxRps} requests/s and ${maxConcurrent} in flight.`,
      '',
      table(
        ['Wall s', 'Requests', '429s', 'Successful requests/s', 'Share of allowed rate', '429 share'],
        [[fmt.n(result.wallS, 1), fmt.int(requests), fmt.int(throttled), fmt.n(successes / result.wallS, 1),
          `${fmt.n(achieved * 100, 1)}%`, `${fmt.n(share429 * 100, 2)}%`]],
      ),
      '',
      `Target: >= 90% of the allowed rate (got ${fmt.n(achieved * 100, 1)}%) with <= 5% 429s ` +
      `(got ${fmt.n(share429 * 100, 2)}%).`,
    ].join('\n');
    return { markdown, figures: { achieved, share429, requests, throttled } };
  });
}

/** Items of partition i: the simulator splits the index range into n contiguous, near-equal parts. */
function partitionSize(events, n, i) {
  return Math.floor(((i + 1) * events) / n) - Math.floor((i * events) / n);
}
