// Datapoints (issue 28): a `resource: datapoints` export of raw points, to Parquet and to NDJSON,
// against the official JavaScript SDK draining the same series with `datapoints.retrieve` and its
// cursors into NDJSON (bench/peers/sdk-datapoints.js), and against a raw drain of the export's own
// requests at 150 ms a request (bench/peers/raw-points.js). Interleaved rounds, medians:
//
// - each round: 10M points in 1,000 series (both formats and the SDK, the order turned by one each
//   round), 1M points in 1,000 series and 5M points in one series (both formats), each data set
//   in a simulator of its own; CPU s per 1M points and peak RSS first (the program's own, on its
//   own core when pinned), then wall and bytes per point on disk, as ratios to the SDK's of the
//   same round; peak RSS at 10M and at 5M in one series as ratios to the same format's at 1M;
// - then rounds at `latencyMs` added to every request: the raw drain and both formats, wall ratio.
//
// Every program reads the window [0, END): the SDK's default start, and the simulator's start
// time (`simulate --start-time END`: its points lie before it, live series grow after it), so all
// read the same Good points; each count is checked against the simulator's data set, computed in
// this process on a clock that stands at END. The long series is seed LONG_SEED's only series,
// a numeric one (seed 1's is a string series). Smaller sizes for a quick look:
// `npm run bench -- datapoints --points 200000 --rounds 1`.
import { createDataset } from '../../dist/simulator/index.js';
import { fmt, median, runExport, runRawPoints, runSdkDatapoints, table, turn, withSimulator } from '../lib/harness.js';

export const title = 'Datapoints: the export against the SDK and a raw drain (issue 28)';

/** The window's end, exclusive: the simulator's start time, when its points end. */
const END = Date.UTC(2026, 0, 1);
export const WINDOW = { start: 0, end: END };
const LONG_SEED = 2;
const FORMATS = ['parquet', 'ndjson'];
const NAMES = { parquet: 'bulk-extract Parquet', ndjson: 'bulk-extract NDJSON', sdk: '@cognite/sdk to NDJSON', raw: 'raw drain (baseline)' };

export async function run({
  points = 10_000_000,
  series = 1000,
  rounds = 3,
  partitions = 10,
  concurrency = 10,
  latencyMs = 150,
} = {}) {
  const sets = {
    main: { timeseries: series, datapoints: points, startTime: END },
    small: { timeseries: series, datapoints: Math.round(points / 10), startTime: END },
    long: { timeseries: 1, datapoints: Math.round(points / 2), seed: LONG_SEED, startTime: END },
  };
  const truth = Object.fromEntries(Object.entries(sets).map(([name, set]) => [name, dataSetFacts(set)]));
  if (truth.long.stringPoints > 0) throw new Error(`seed ${LONG_SEED}'s only series is a string series: choose another seed`);
  const exportOf = (sim, set, format) =>
    runExport(sim, pointsJob({ partitions, concurrency, format }), { expectRows: truth[set].points });

  const measured = [];
  for (let round = 0; round < rounds; round++) {
    const order = turn(['parquet', 'ndjson', 'sdk'], round);
    const runs = {};
    await withSimulator({ events: 1000, ...sets.main }, async (sim) => {
      for (const name of order) {
        console.error(`datapoints round ${round + 1}: ${name}, ${fmt.int(truth.main.points)} points`);
        runs[name] = name === 'sdk'
          ? await runSdkDatapoints(sim, { end: END, concurrency, expectRows: truth.main.points })
          : await exportOf(sim, 'main', name);
      }
    });
    for (const set of ['small', 'long']) {
      await withSimulator({ events: 1000, ...sets[set] }, async (sim) => {
        for (const format of turn(FORMATS, round)) {
          console.error(`datapoints round ${round + 1}: ${format}, ${set}, ${fmt.int(truth[set].points)} points`);
          runs[`${format} ${set}`] = await exportOf(sim, set, format);
        }
      });
    }
    measured.push(runs);
  }

  const latency = [];
  for (let round = 0; round < rounds; round++) {
    const runs = {};
    await withSimulator({ events: 1000, ...sets.main, faults: { latencyMs } }, async (sim) => {
      for (const name of turn(['raw', ...FORMATS], round)) {
        console.error(`datapoints at ${latencyMs} ms, round ${round + 1}: ${name}`);
        runs[name] = name === 'raw'
          ? await runRawPoints(sim, { partitions, concurrency, ...WINDOW, expectRows: truth.main.points })
          : await exportOf(sim, 'main', name);
      }
    });
    latency.push(runs);
  }
  return report({ sets, truth, measured, latency, partitions, concurrency, latencyMs });
}

/**
 * The export's job (runExport's first argument): raw points of every series in the window, one format.
 * bench/compare-builds.js --kind datapoints runs it too.
 */
export function pointsJob({ partitions, concurrency, format }) {
  return { resource: 'datapoints', partitions, concurrency, formats: [format], extra: { stream: WINDOW } };
}

/** The points each program must read from a data set, and how many of them are in string series. */
export function dataSetFacts({ timeseries, datapoints, seed = 1 }) {
  const clock = { now: () => END, sleep: () => Promise.resolve() };
  const dataset = createDataset({ seed, timeseries, datapoints, clock });
  let points = 0;
  let stringPoints = 0;
  for (let i = 0; i < timeseries; i++) {
    const series = dataset.datapoints.series(i);
    const { from, to } = series.window(WINDOW.start, WINDOW.end);
    let good = 0;
    // The platform's defaults: only Good points (bad and uncertain ones left out).
    for (let k = from; k < to; k++) if (series.qualityOf(k) === 'good') good++;
    points += good;
    if (series.isString) stringPoints += good;
  }
  return { points, stringPoints };
}

/** Bytes on disk of an export (its manifest's files) or of the SDK's NDJSON file. */
function bytesOf(run) {
  return run.manifest === undefined ? run.bytes : run.manifest.files.reduce((sum, file) => sum + file.bytes, 0);
}

function report({ sets, truth, measured, latency, partitions, concurrency, latencyMs }) {
  const points = truth.main.points;
  const cpuPerM = (run, count = points) => (run.cpuS / count) * 1e6;
  const perPoint = (run, count = points) => bytesOf(run) / count;
  /** Per round, each program's figures and ratios to the SDK of that round. */
  const vsSdk = measured.map((runs) => {
    const sdk = runs.sdk;
    return Object.fromEntries(
      ['parquet', 'ndjson', 'sdk'].map((name) => {
        const r = runs[name];
        return [name, {
          cpuPerM: cpuPerM(r),
          cpuVsSdk: cpuPerM(r) / cpuPerM(sdk),
          rssMB: r.peakRssMB,
          rssVsSdk: r.peakRssMB / sdk.peakRssMB,
          wallS: r.wallS,
          wallVsSdk: r.wallS / sdk.wallS,
          bytesPerPoint: perPoint(r),
          bytesVsSdk: perPoint(r) / perPoint(sdk),
          cpuS: r.cpuS,
          simCpuS: r.simCpuS,
        }];
      }),
    );
  });
  const med = (pick) => median(vsSdk.map(pick));
  const mainRows = ['parquet', 'ndjson', 'sdk'].map((name) => [
    NAMES[name],
    fmt.n(med((round) => round[name].cpuPerM)),
    fmt.ratio(med((round) => round[name].cpuVsSdk)),
    fmt.int(med((round) => round[name].rssMB)),
    fmt.ratio(med((round) => round[name].rssVsSdk)),
    fmt.n(med((round) => round[name].wallS)),
    fmt.ratio(med((round) => round[name].wallVsSdk)),
    fmt.n(med((round) => round[name].bytesPerPoint), 1),
    fmt.ratio(med((round) => round[name].bytesVsSdk)),
    fmt.n(med((round) => round[name].simCpuS)),
  ]);
  const roundRows = measured.flatMap((runs, i) =>
    Object.entries(runs).map(([name, r]) => {
      const [program, set = 'main'] = name.split(' ');
      const count = truth[set].points;
      return [
        String(i + 1),
        `${NAMES[program]}, ${fmt.int(count)}${set === 'long' ? ' in 1 series' : ''}`,
        fmt.n(r.wallS),
        fmt.n(r.cpuS),
        fmt.n(cpuPerM(r, count)),
        fmt.int(r.peakRssMB),
        fmt.n(perPoint(r, count), 1),
        fmt.n(r.simCpuS),
      ];
    }),
  );
  const flatness = FORMATS.map((format) => {
    const rss = (key) => median(measured.map((runs) => runs[key].peakRssMB));
    const vsSmall = (key) => median(measured.map((runs) => runs[key].peakRssMB / runs[`${format} small`].peakRssMB));
    return {
      format,
      small: rss(`${format} small`),
      main: rss(format),
      long: rss(`${format} long`),
      mainVsSmall: vsSmall(format),
      longVsSmall: vsSmall(`${format} long`),
    };
  });
  const latencyRounds = latency.map((runs) => ({
    raw: runs.raw.wallS,
    parquet: runs.parquet.wallS,
    ndjson: runs.ndjson.wallS,
    requests: runs.raw.requests,
  }));
  const latencyRows = [
    ...latency.flatMap((runs, i) =>
      ['raw', ...FORMATS].map((name) => [
        String(i + 1),
        NAMES[name],
        fmt.n(runs[name].wallS),
        name === 'raw' ? '' : fmt.ratio(runs.raw.wallS / runs[name].wallS),
        fmt.n(runs[name].cpuS),
        fmt.int(runs[name].peakRssMB),
        fmt.n(runs[name].simCpuS),
      ]),
    ),
    ...['raw', ...FORMATS].map((name) => [
      'median',
      NAMES[name],
      fmt.n(median(latency.map((runs) => runs[name].wallS))),
      name === 'raw' ? '' : fmt.ratio(median(latency.map((runs) => runs.raw.wallS / runs[name].wallS))),
      fmt.n(median(latency.map((runs) => runs[name].cpuS))),
      fmt.int(median(latency.map((runs) => runs[name].peakRssMB))),
      fmt.n(median(latency.map((runs) => runs[name].simCpuS))),
    ]),
  ];
  const numericShare = 1 - truth.main.stringPoints / points;
  const check = (format) => {
    const f = flatness.find((each) => each.format === format);
    return (
      `${format}: CPU vs SDK ${fmt.ratio(med((round) => round[format].cpuVsSdk))} (target <= 0.5x), ` +
      `peak RSS vs SDK ${fmt.ratio(med((round) => round[format].rssVsSdk))} (<= 1x), ` +
      `RSS at ${fmt.int(points)} vs ${fmt.int(truth.small.points)} points ${fmt.ratio(f.mainVsSmall)}, ` +
      `one series of ${fmt.int(truth.long.points)} vs ${fmt.int(truth.small.points)} ${fmt.ratio(f.longVsSmall)} (<= 1.1x), ` +
      `speed vs raw at ${latencyMs} ms ${fmt.ratio(median(latency.map((runs) => runs.raw.wallS / runs[format].wallS)))} (>= 0.95x)`
    );
  };
  const markdown = [
    `${fmt.int(points)} raw points (the Good ones of ${fmt.int(sets.main.datapoints)}, window [0, ${new Date(END).toISOString().slice(0, 10)}); ` +
    `${fmt.n(numericShare * 100, 1)}% of them in numeric series) in ${fmt.int(sets.main.timeseries)} series, n = ${partitions}, ` +
    `concurrency ${concurrency} (the SDK: ${concurrency} calls at once), OAuth, gzip, no added latency; ` +
    `${measured.length} interleaved rounds, medians, ratios taken within a round.`,
    '',
    table(
      ['Program', 'CPU s per 1M points', 'CPU vs SDK', 'Peak RSS MB', 'RSS vs SDK', 'Wall s', 'Wall vs SDK', 'Bytes per point', 'Bytes vs SDK', 'Simulator CPU s'],
      mainRows,
    ),
    '',
    `Peak RSS (MB, medians) against the number of points: ${fmt.int(truth.small.points)} points in ${fmt.int(sets.small.timeseries)} series, ` +
    `${fmt.int(points)} in ${fmt.int(sets.main.timeseries)}, and ${fmt.int(truth.long.points)} in one numeric series (seed ${LONG_SEED}).`,
    '',
    table(
      ['Format', `RSS at ${fmt.int(truth.small.points)}`, `RSS at ${fmt.int(points)}`, 'vs fewer', `RSS at ${fmt.int(truth.long.points)}, one series`, 'vs fewer'],
      flatness.map((f) => [
        f.format,
        fmt.int(f.small),
        fmt.int(f.main),
        fmt.ratio(f.mainVsSmall),
        fmt.int(f.long),
        fmt.ratio(f.longVsSmall),
      ]),
    ),
    '',
    'Every run:',
    '',
    table(['Round', 'Program, points', 'Wall s', 'CPU s', 'CPU s per 1M points', 'Peak RSS MB', 'Bytes per point', 'Simulator CPU s'], roundRows),
    '',
    `At ${latencyMs} ms added to every request (the ${fmt.int(points)} points; the raw drain sends the export's requests, ` +
    `${median(latencyRounds.map((r) => r.requests))} points requests, and its wall is its own, from its first request):`,
    '',
    table(['Round', 'Program', 'Wall s', 'Speed vs raw', 'CPU s', 'Peak RSS MB', 'Simulator CPU s'], latencyRows),
    '',
    `Targets (issue 28): ${check('parquet')}; ${check('ndjson')}.`,
  ].join('\n');
  return { markdown, figures: { truth, vsSdk, flatness, latency: latencyRounds } };
}
