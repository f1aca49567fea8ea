#!/usr/bin/env node
// The adaptive limiter under random 429s (issue 47): an events export through the real CLI against
// the simulator answering a share of list requests 429 at random ("concurrent requests", a limit of
// 50: the simulator's `rate429` fault), far below any real limit. The limiter's concurrency is read
// from the run's own /metrics (`bulk_extract_limiter_concurrency`, served with --metrics-port) every
// `--intervalMs`, so silent changes count too, and printed as: mean concurrency over the run,
// seconds below the configured value, the lowest value, rows/s. `--cli` measures another build
// (e.g. main's bin/bulk-extract.js); the simulator is always this checkout's.
//
//   npm run build && node bench/tools/limiter-429.js [--cli /work/main/bin/bulk-extract.js] \
//     [--events 500000] [--rate429 0.05] [--latencyMs 20] [--concurrency 8] [--partitions 10] [--limit 1000] \
//     [--rounds 1]
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import { CLI, machine, placement, startSimulator, timed, writeJob } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    cli: { type: 'string', default: CLI },
    events: { type: 'string', default: '500000' },
    rate429: { type: 'string', default: '0.05' },
    latencyMs: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '8' },
    partitions: { type: 'string', default: '10' },
    limit: { type: 'string', default: '1000' },
    intervalMs: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '1' },
  },
});
const events = Number(values.events);
const concurrency = Number(values.concurrency);
const intervalMs = Number(values.intervalMs);

/** A port free now, for the run's /metrics. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The limiter's concurrency from the run's /metrics; undefined until the endpoint answers. */
async function concurrencyNow(port) {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const line = text.split('\n').find((row) => row.startsWith('bulk_extract_limiter_concurrency'));
    return line === undefined ? undefined : Number(line.split(' ').at(-1));
  } catch {
    return undefined;
  }
}

async function round(sim) {
  const port = await freePort();
  const job = writeJob(sim, {
    partitions: Number(values.partitions),
    concurrency,
    limit: Number(values.limit),
    formats: ['ndjson'],
  });
  const samples = [];
  let running = true;
  const sampling = (async () => {
    while (running) {
      const at = performance.now();
      const value = await concurrencyNow(port);
      if (value !== undefined) samples.push({ at, value });
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  try {
    const run = await timed(
      [values.cli, 'run', '--config', job.file, '--log-level', 'warn', '--metrics-port', String(port), '--json'],
      { env: { BENCH_SECRET: 'demo-secret' }, sim },
    );
    running = false;
    await sampling;
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1));
    const rows = result.rowsThisRun ?? result.rows;
    if (rows !== events) throw new Error(`the export wrote ${rows} rows, expected ${events}`);
    return { ...figures(samples), rows, wallS: run.wallS, throttled: result.throttled, requests: result.requests };
  } finally {
    running = false;
    job.cleanup();
  }
}

/** Time-weighted over the samples: each value holds until the next sample. */
function figures(samples) {
  let weighted = 0;
  let belowMs = 0;
  let spanMs = 0;
  for (let i = 0; i + 1 < samples.length; i++) {
    const ms = samples[i + 1].at - samples[i].at;
    spanMs += ms;
    weighted += samples[i].value * ms;
    if (samples[i].value < concurrency) belowMs += ms;
  }
  return {
    samples: samples.length,
    mean: spanMs > 0 ? weighted / spanMs : Number.NaN,
    belowS: belowMs / 1000,
    lowest: Math.min(...samples.map((sample) => sample.value)),
  };
}

const faults = { rate429: Number(values.rate429), latencyMs: Number(values.latencyMs) };
const sim = await startSimulator({ events, faults });
try {
  console.log(`# ${values.cli}: ${events.toLocaleString('en-US')} events, n = ${values.partitions}, ` +
    `concurrency ${concurrency}, faults ${JSON.stringify(faults)}; ${machine()}; ${placement()}`);
  console.log('| Round | Wall s | Rows/s | Requests (429) | Mean concurrency | Seconds below | Lowest | Samples |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (let i = 1; i <= Number(values.rounds); i++) {
    const f = await round(sim);
    console.log(`| ${i} | ${f.wallS.toFixed(1)} | ${Math.round(f.rows / f.wallS).toLocaleString('en-US')} | ` +
      `${f.requests} (${f.throttled}) | ${f.mean.toFixed(2)} | ${f.belowS.toFixed(1)} | ${f.lowest} | ${f.samples} |`);
  }
} finally {
  await sim.stop();
}
