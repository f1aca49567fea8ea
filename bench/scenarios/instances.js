// Data-model instances (issue 29): 1M nodes of the asset-like view (cdf_cdm:CogniteAsset/v1 of the
// simulator) exported by a `resource: instances` stream split by space, to Parquet and to NDJSON,
// against the official JavaScript SDK listing the same view into NDJSON with `instances.list` and
// its cursors (bench/peers/sdk-instances.js). The simulator's nodes lie in three spaces; every
// program reads them in three queries at once, one per space (the SDK's three chains drained
// concurrently; the export's `split: space` with `concurrency: 3`), OAuth, gzip, no added latency.
//
// Interleaved rounds (a simulator of its own each, the order turned by one each round), medians:
// CPU s per 1M rows and peak RSS first (the program's own, on its own core when pinned), as ratios
// to the SDK's of the same round, then wall and the simulator's CPU; the rounds' spread (lowest to
// highest) under the medians. Each program's row count is checked against the data set. Smaller
// sizes for a quick look: `npm run bench -- instances --instances 20000 --rounds 1`.
import { fmt, median, runExport, runSdkInstances, table, turn, withSimulator } from '../lib/harness.js';

export const title = 'Data-model instances: the export against the SDK (issue 29)';

export const VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
/** The instance spaces of the simulator's nodes (src/simulator/models/instance-values.ts, SITES). */
export const SPACES = ['sim_site_a', 'sim_site_b', 'sim_site_c'];
const PROGRAMS = ['parquet', 'ndjson', 'sdk'];
const NAMES = {
  parquet: 'bulk-extract Parquet',
  ndjson: 'bulk-extract NDJSON',
  sdk: '@cognite/sdk 10.5 `instances.list` + nextCursor to NDJSON',
};

/** The simulator's --instances for `instances` nodes: only asset nodes, each with data in CogniteAsset. */
export const nodesOnly = (instances) => `assets=${instances},activities=0,timeseries=0,edges=0`;

/**
 * The export's job (runExport's first argument): every node of VIEW, one query per space at once, one
 * format. bench/compare-builds.js --kind instances runs it too.
 */
export function instancesJob({ format }) {
  const stream = { view: VIEW, spaces: SPACES, split: 'space' };
  return { resource: 'instances', concurrency: SPACES.length, formats: [format], extra: { stream } };
}

export async function run({ instances = 1_000_000, rounds = 3 } = {}) {
  const spec = nodesOnly(instances);
  const exportOf = (sim, format) => runExport(sim, instancesJob({ format }), { expectRows: instances });
  const measured = [];
  for (let round = 0; round < rounds; round++) {
    const runs = {};
    await withSimulator({ events: 1000, instances: spec }, async (sim) => {
      for (const name of turn(PROGRAMS, round)) {
        console.error(`instances round ${round + 1}: ${name}, ${fmt.int(instances)} nodes`);
        runs[name] = name === 'sdk'
          ? await runSdkInstances(sim, { view: VIEW, spaces: SPACES, expectRows: instances })
          : await exportOf(sim, name);
      }
    });
    measured.push(runs);
  }
  return report({ instances, measured });
}

function report({ instances, measured }) {
  const cpuPerM = (run) => (run.cpuS / instances) * 1e6;
  /** Per round, each program's figures and its ratios to the SDK of that round. */
  const vsSdk = measured.map((runs) => {
    const sdk = runs.sdk;
    return Object.fromEntries(
      PROGRAMS.map((name) => {
        const r = runs[name];
        return [name, {
          cpuPerM: cpuPerM(r),
          cpuVsSdk: cpuPerM(r) / cpuPerM(sdk),
          rssMB: r.peakRssMB,
          rssVsSdk: r.peakRssMB / sdk.peakRssMB,
          wallS: r.wallS,
          wallVsSdk: r.wallS / sdk.wallS,
          cpuS: r.cpuS,
          simCpuS: r.simCpuS,
        }];
      }),
    );
  });
  const med = (name, key) => median(vsSdk.map((round) => round[name][key]));
  const spread = (name, key, show) => {
    const all = vsSdk.map((round) => round[name][key]);
    return `${show(Math.min(...all))}-${show(Math.max(...all))}`;
  };
  const mainRows = PROGRAMS.map((name) => [
    NAMES[name],
    fmt.n(med(name, 'cpuPerM')),
    fmt.ratio(med(name, 'cpuVsSdk')),
    fmt.int(med(name, 'rssMB')),
    fmt.ratio(med(name, 'rssVsSdk')),
    fmt.n(med(name, 'wallS')),
    fmt.ratio(med(name, 'wallVsSdk')),
    fmt.n(med(name, 'simCpuS')),
  ]);
  const spreadRows = PROGRAMS.map((name) => [
    NAMES[name],
    spread(name, 'cpuPerM', fmt.n),
    name === 'sdk' ? '' : spread(name, 'cpuVsSdk', fmt.ratio),
    spread(name, 'rssMB', fmt.int),
    name === 'sdk' ? '' : spread(name, 'rssVsSdk', fmt.ratio),
    spread(name, 'wallS', fmt.n),
    spread(name, 'simCpuS', fmt.n),
  ]);
  const roundRows = measured.flatMap((runs, i) =>
    Object.entries(runs).map(([name, r]) => [
      String(i + 1),
      NAMES[name],
      fmt.n(r.wallS),
      fmt.n(r.cpuS),
      fmt.n(cpuPerM(r)),
      fmt.int(r.peakRssMB),
      fmt.n(r.simCpuS),
    ]),
  );
  const check = (name) =>
    `${name}: CPU vs SDK ${fmt.ratio(med(name, 'cpuVsSdk'))}, peak RSS vs SDK ${fmt.ratio(med(name, 'rssVsSdk'))}, ` +
    `wall vs SDK ${fmt.ratio(med(name, 'wallVsSdk'))}`;
  const markdown = [
    `${fmt.int(instances)} nodes of ${VIEW.space}:${VIEW.externalId}/${VIEW.version} in ${SPACES.length} spaces, ` +
    `${SPACES.length} queries at once, one per space (the export's \`split: space\` with concurrency ${SPACES.length}; ` +
    `the SDK's ${SPACES.length} cursor chains drained concurrently), OAuth, gzip, no added latency; ` +
    `${measured.length} interleaved round${measured.length === 1 ? '' : 's'}, medians, ratios taken within a round. The SDK's wall is its own, ` +
    'from before its first request; the exports\' that of the whole process.',
    '',
    table(
      ['Program', 'CPU s per 1M rows', 'CPU vs SDK', 'Peak RSS MB', 'RSS vs SDK', 'Wall s', 'Wall vs SDK', 'Simulator CPU s'],
      mainRows,
    ),
    '',
    'The rounds\' spread (lowest-highest):',
    '',
    table(['Program', 'CPU s per 1M rows', 'CPU vs SDK', 'Peak RSS MB', 'RSS vs SDK', 'Wall s', 'Simulator CPU s'], spreadRows),
    '',
    'Every run:',
    '',
    table(['Round', 'Program', 'Wall s', 'CPU s', 'CPU s per 1M rows', 'Peak RSS MB', 'Simulator CPU s'], roundRows),
    '',
    `Issue 29: ${check('parquet')}; ${check('ndjson')}.`,
  ].join('\n');
  return { markdown, figures: { instances, vsSdk } };
}
