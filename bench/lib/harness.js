// Shared parts of the benchmark scenarios (bench/scenarios/*.js): a simulator in its own process,
// programs run under /usr/bin/time (wall, user + sys CPU, peak RSS of that process alone), and job
// files for the real CLI. Every program measured runs in its own process, so one program's CPU and
// memory are never mixed with another's.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = resolve(import.meta.dirname, '..', '..');
/** The CLI measured; BENCH_CLI points at another build (e.g. a worktree of an older commit) for "before" figures. */
export const CLI = process.env.BENCH_CLI ?? join(ROOT, 'bin', 'bulk-extract.js');
/** The simulator is always this checkout's, so that "before" and "after" read the same server. */
const SIMULATOR_CLI = join(ROOT, 'bin', 'bulk-extract.js');
const CLIENT_SECRET = 'demo-secret';

/**
 * With 2 or more cores (and `taskset`), the simulator runs on core 0 and every program measured on
 * core 1, every thread of each, so that one never takes CPU from the other. BENCH_NO_PIN=1 lets
 * them share the cores.
 */
export const PINNED =
  cpus().length >= 2 && process.env.BENCH_NO_PIN === undefined && spawnSync('taskset', ['-V']).status === 0;

/** Where the processes ran, for the reports. */
export function placement() {
  return PINNED
    ? 'pinned: simulator on core 0, the program measured on core 1 (taskset)'
    : 'not pinned: simulator and the program measured share the cores';
}

/** `command args` run on `core` when pinning, as spawn arguments. */
function onCore(core, command, args) {
  return PINNED ? ['taskset', ['-c', String(core), command, ...args]] : [command, args];
}

/** The machine, as RESULTS.md records it. */
export function machine() {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${cpus().length} x ${cpu}, Node.js ${process.version}`;
}

/**
 * Starts `bulk-extract simulate` in its own process. `faults` is the simulator's --faults object
 * (e.g. { latencyMs: 20 }); `timeseries`, `datapoints`, `instances` (its spec, e.g.
 * `assets=1000000,activities=0`) and `seed` its flags of those names, the simulator's defaults when
 * not given. Resolves once it prints its address line.
 */
export async function startSimulator({
  events,
  assets = 10_000,
  faults = {},
  eventMetadataBytes = 0,
  timeseries,
  datapoints,
  instances,
  seed,
  startTime,
}) {
  const args = [SIMULATOR_CLI, 'simulate', '--events', String(events), '--assets', String(assets), '--log-level', 'warn'];
  if (Object.keys(faults).length > 0) args.push('--faults', JSON.stringify(faults));
  if (eventMetadataBytes > 0) args.push('--event-metadata-bytes', String(eventMetadataBytes));
  const flags = [['--timeseries', timeseries], ['--datapoints', datapoints], ['--instances', instances], ['--seed', seed],
    ['--start-time', startTime]];
  for (const [flag, value] of flags) {
    if (value !== undefined) args.push(flag, String(value));
  }
  const child = spawn(...onCore(0, process.execPath, args), { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolveLine, reject) => {
    child.once('exit', (code) => reject(new Error(`the simulator exited with ${code} before listening`)));
    createInterface({ input: child.stdout }).once('line', resolveLine);
  });
  child.removeAllListeners('exit');
  const { baseUrl, origin, tokenUrl } = JSON.parse(line);
  return {
    baseUrl,
    origin,
    tokenUrl,
    pid: child.pid,
    project: new URL(baseUrl).pathname.split('/').at(-1),
    /** CPU seconds (user + sys) the simulator has used so far, from /proc/PID/stat. */
    cpuSeconds: () => procCpuSeconds(child.pid),
    stop: () =>
      new Promise((done) => {
        child.once('exit', done);
        child.kill('SIGTERM');
      }),
  };
}

function procCpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A bearer token from the simulator's token endpoint (client credentials of the demo client). */
export async function fetchToken(sim) {
  const response = await fetch(sim.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=client_credentials&client_id=demo&client_secret=${CLIENT_SECRET}`,
  });
  if (!response.ok) throw new Error(`token endpoint answered ${response.status}`);
  return (await response.json()).access_token;
}

/**
 * Runs `node ARGS` under /usr/bin/time, `node` being the Node that runs this harness unless another
 * is given (a path). Resolves with wall seconds, user and sys CPU seconds and
 * peak RSS in MB of that process (and its threads), its stdout, and the simulator's CPU seconds
 * spent meanwhile when `sim` is given. Rejects when the program fails.
 */
export async function timed(nodeArgs, { env = {}, sim, node = process.execPath } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-time-'));
  const report = join(dir, 'time.txt');
  const simCpuBefore = sim?.cpuSeconds();
  const timeArgs = ['-o', report, '-f', '%e %U %S %M', node, ...nodeArgs];
  const child = spawn(...onCore(1, '/usr/bin/time', timeArgs), {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((done) => child.once('exit', done));
  const simCpuS = sim === undefined ? undefined : sim.cpuSeconds() - simCpuBefore;
  const fields = readFileSync(report, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`node ${nodeArgs.join(' ')} exited with ${code}:\n${stderr.slice(-4000)}`);
  const [wallS, userS, sysS, maxRssKb] = fields;
  return { wallS, cpuS: userS + sysS, userS, sysS, peakRssMB: maxRssKb / 1024, stdout, stderr, simCpuS };
}

/** The last JSON line a peer program printed. */
export function lastJsonLine(stdout) {
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

/**
 * Writes a job file for the simulator and returns its path and output dir. The client secret comes
 * from the environment, as in a real job. `extra.stream` adds keys to the stream (e.g. a datapoints
 * stream's `start` and `end`, an instances stream's `view`, `spaces` and `split`). An instances
 * stream gets no `partitions`: the platform's instances API has none (its `split` makes the queries).
 */
export function writeJob(sim, { resource = 'events', partitions = 10, concurrency, formats, limit = 1000, extra = {} }) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-job-'));
  const out = join(dir, 'out');
  const job = {
    source: {
      baseUrl: sim.baseUrl,
      auth: { type: 'oauth-client-credentials', tokenUrl: sim.tokenUrl, clientId: 'demo', clientSecret: '${BENCH_SECRET}' },
      ...(concurrency === undefined ? {} : { concurrency }),
      ...extra.source,
    },
    streams: [{ resource, ...(resource === 'instances' ? {} : { partitions }), limit, ...extra.stream }],
    output: { dir: out, formats, ...extra.output },
  };
  const file = join(dir, 'job.json');
  writeFileSync(file, JSON.stringify(job, null, 2));
  return { file, out, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Runs one export through the real CLI under /usr/bin/time and checks that the manifest holds the
 * expected number of rows in every format. `nodeOptions` are flags for node itself; `cli` another
 * build's bin/bulk-extract.js.
 */
export async function runExport(sim, jobOptions, { expectRows, nodeOptions = [], env = {}, cli = CLI, node } = {}) {
  const job = writeJob(sim, jobOptions);
  try {
    const result = await timed([...nodeOptions, cli, 'run', '--config', job.file, '--log-level', 'warn'], {
      env: { BENCH_SECRET: CLIENT_SECRET, ...env },
      sim,
      node,
    });
    const manifest = JSON.parse(readFileSync(join(job.out, '_manifest.json'), 'utf8'));
    const rows = rowsByFormat(manifest);
    for (const format of jobOptions.formats) {
      if (expectRows !== undefined && rows[format] !== expectRows) {
        throw new Error(`the ${format} export holds ${rows[format]} rows, expected ${expectRows}`);
      }
    }
    return { ...result, rows: rows[jobOptions.formats[0]], manifest };
  } finally {
    job.cleanup();
  }
}

function rowsByFormat(manifest) {
  const rows = {};
  for (const file of manifest.files) rows[file.format] = (rows[file.format] ?? 0) + file.rows;
  if (manifest.state !== 'complete') throw new Error(`the export ended in state ${manifest.state}`);
  return rows;
}

/** Runs the raw undici drain (the baseline) in its own process. */
export async function runRawDrain(
  sim,
  { resource = 'events', partitions = 10, concurrency = partitions, gzip = true, saveBodies, expectRows },
) {
  const token = await fetchToken(sim);
  const args = [join(ROOT, 'bench/peers/raw-drain.js'), '--base-url', sim.baseUrl, '--resource', resource];
  args.push('--partitions', String(partitions), '--concurrency', String(concurrency), '--token', token);
  // gzip by default: the worker's transport asks for it too, so both get the same bodies.
  if (gzip) args.push('--gzip');
  if (saveBodies !== undefined) args.push('--save-bodies', saveBodies);
  // The export pins maxLastUpdatedTime at its start; the peers send a pin too, so the simulator
  // does the same (filtered) work for each.
  args.push('--max-last-updated-time', String(Date.now()));
  const result = await timed(args, { sim });
  const figures = { ...result, ...lastJsonLine(result.stdout) };
  if (expectRows !== undefined && figures.rows !== expectRows) {
    throw new Error(`the raw drain read ${figures.rows} rows, expected ${expectRows}`);
  }
  return figures;
}

/** Runs the @cognite/sdk drain into NDJSON in its own process; `mode` get or list (bench/peers/sdk-drain.js). */
export async function runSdkDrain(sim, { resource = 'events', partitions = 10, mode = 'get', expectRows }) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sdk-'));
  try {
    const args = [join(ROOT, 'bench/peers/sdk-drain.js'), '--origin', sim.origin, '--project', sim.project];
    args.push('--token-url', sim.tokenUrl, '--resource', resource, '--partitions', String(partitions));
    args.push('--out', join(dir, 'out.ndjson'), '--max-last-updated-time', String(Date.now()), '--mode', mode);
    const result = await timed(args, { sim, env: { SDK_CLIENT_SECRET: CLIENT_SECRET } });
    const figures = { ...result, ...lastJsonLine(result.stdout) };
    if (expectRows !== undefined && figures.rows !== expectRows) {
      throw new Error(`the SDK drain read ${figures.rows} rows, expected ${expectRows}`);
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the raw datapoints drain (bench/peers/raw-points.js, the export's requests fetched and
 * discarded) in its own process; `start` and `end` the window in epoch ms.
 */
export async function runRawPoints(sim, { partitions = 10, concurrency = 8, start, end, expectRows }) {
  const token = await fetchToken(sim);
  const args = [join(ROOT, 'bench/peers/raw-points.js'), '--base-url', sim.baseUrl, '--token', token, '--gzip'];
  args.push('--partitions', String(partitions), '--concurrency', String(concurrency));
  if (start !== undefined) args.push('--start', String(start));
  if (end !== undefined) args.push('--end', String(end));
  const result = await timed(args, { sim });
  // The program's own wall (from its first request) replaces /usr/bin/time's, as for runRawDrain.
  const figures = { ...result, processWallS: result.wallS, ...lastJsonLine(result.stdout) };
  if (expectRows !== undefined && figures.rows !== expectRows) {
    throw new Error(`the raw points drain read ${figures.rows} points, expected ${expectRows}`);
  }
  return figures;
}

/**
 * Runs the @cognite/sdk datapoints drain into NDJSON in its own process (bench/peers/sdk-datapoints.js);
 * `end` in epoch ms, `start` the SDK's default (0). Resolves with its figures and the NDJSON's bytes.
 */
export async function runSdkDatapoints(sim, { end, concurrency = 10, expectRows }) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sdk-'));
  try {
    const out = join(dir, 'points.ndjson');
    const args = [join(ROOT, 'bench/peers/sdk-datapoints.js'), '--origin', sim.origin, '--project', sim.project];
    args.push('--token-url', sim.tokenUrl, '--out', out, '--concurrency', String(concurrency));
    if (end !== undefined) args.push('--end', String(end));
    const result = await timed(args, { sim, env: { SDK_CLIENT_SECRET: CLIENT_SECRET } });
    const bytes = statSync(out).size;
    const figures = { ...result, processWallS: result.wallS, ...lastJsonLine(result.stdout), bytes };
    if (expectRows !== undefined && figures.points !== expectRows) {
      throw new Error(`the SDK datapoints drain read ${figures.points} points, expected ${expectRows}`);
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the @cognite/sdk instances drain into NDJSON in its own process (bench/peers/sdk-instances.js):
 * every node of `view` (`{space, externalId, version}`), one query per entry of `spaces` drained at
 * once, or one query over every space. Resolves with its figures and the NDJSON's bytes.
 */
export async function runSdkInstances(sim, { view, spaces, expectRows }) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sdk-'));
  try {
    const out = join(dir, 'instances.ndjson');
    const args = [join(ROOT, 'bench/peers/sdk-instances.js'), '--origin', sim.origin, '--project', sim.project];
    args.push('--token-url', sim.tokenUrl, '--out', out, '--view', `${view.space}/${view.externalId}/${view.version}`);
    if (spaces !== undefined) args.push('--spaces', spaces.join(','));
    const result = await timed(args, { sim, env: { SDK_CLIENT_SECRET: CLIENT_SECRET } });
    const bytes = statSync(out).size;
    // The program's own wall (from before its first request) replaces /usr/bin/time's, as for runSdkDrain.
    const figures = { ...result, processWallS: result.wallS, ...lastJsonLine(result.stdout), bytes };
    if (expectRows !== undefined && figures.rows !== expectRows) {
      throw new Error(`the SDK instances drain read ${figures.rows} instances, expected ${expectRows}`);
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts a simulator, runs `body(sim)`, and always stops the simulator. */
export async function withSimulator(options, body) {
  const sim = await startSimulator(options);
  try {
    return await body(sim);
  } finally {
    await sim.stop();
  }
}

/** `list` turned left by `by`: in interleaved rounds, each round starts with another program. */
export function turn(list, by) {
  const at = by % list.length;
  return [...list.slice(at), ...list.slice(0, at)];
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const fmt = {
  int: (x) => Math.round(x).toLocaleString('en-US'),
  n: (x, digits = 2) => x.toFixed(digits),
  ratio: (x) => `${x.toFixed(2)}x`,
};

/** Prints a Markdown table. */
export function table(headers, rows) {
  const lines = [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}
