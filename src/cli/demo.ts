import { randomBytes } from 'node:crypto';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type Resource, RESOURCES } from '../config/job-schema.js';
import { loadConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { runJob } from '../export/index.js';
import { createLogger } from '../log.js';
import { startSimulator } from '../simulator/server.js';
import { writeFileAtomic } from '../util/durable-file.js';
import { ifFound } from '../util/if-found.js';
import { EXIT } from './exit-codes.js';
import { withUsage } from './parse-flags.js';
import { startProgress } from './progress.js';
import { summary } from './run-report.js';
import { StatusLine } from './status-line.js';

/** The demo job, found beside the program whatever the working directory. */
const DEMO_CONFIG = fileURLToPath(new URL('../../config/demo.yaml', import.meta.url));

/** Marks a folder as the demo's own output, which the next demo may replace. */
export const DEMO_MARKER = '_DEMO';

/** Items of each collection the demo's simulator serves, unless a flag says otherwise. */
const DEMO_SIZES = {
  assets: 10_000,
  events: 100_000,
  timeseries: 20_000,
  files: 20_000,
  sequences: 10_000,
  relationships: 40_000,
} as const satisfies Record<Resource, number>;

/** Datapoints in all the demo's time series together, unless --datapoints says otherwise. */
const DEMO_DATAPOINTS = 500_000;

function sizesText(names: readonly Resource[]): string {
  return names.map((name) => `${DEMO_SIZES[name].toLocaleString('en-US')} ${name}`).join(', ');
}

export const DEMO_USAGE = `Usage: bulk-extract demo [--out DIR] [--config FILE] [--assets N] [--events N]
         [--timeseries N] [--files N] [--sequences N] [--relationships N] [--datapoints N]

Starts the built-in simulator on 127.0.0.1 with every collection (default sizes:
${sizesText(RESOURCES.slice(0, 3))},
${sizesText(RESOURCES.slice(3))},
and ${DEMO_DATAPOINTS.toLocaleString('en-US')} datapoints in all the time series together),
exports the demo job (all six collections and the datapoints) into ./demo-out (or --out DIR)
from scratch, in Parquet and NDJSON, prints the summary and how to query the result with DuckDB.
This is \`npm start\`. The folder must be empty, new, or the output of an earlier demo (marked by
a ${DEMO_MARKER} file); any other folder is refused, so the demo never deletes data of yours.
`;

const FLAGS = {
  'config': { type: 'string', default: DEMO_CONFIG },
  'out': { type: 'string' },
  ...(Object.fromEntries(
    RESOURCES.map((name) => [name, { type: 'string', default: String(DEMO_SIZES[name]) }]),
  ) as Record<Resource, { type: 'string'; default: string }>),
  'datapoints': { type: 'string', default: String(DEMO_DATAPOINTS) },
  'log-level': { type: 'string', default: 'info' },
  'help': { type: 'boolean', short: 'h' },
} as const;

export async function runDemo(argv: string[]): Promise<number> {
  const { values } = withUsage(DEMO_USAGE, () => parseArgs({ args: argv, strict: true, options: FLAGS }));
  if (values.help) {
    console.log(DEMO_USAGE);
    return EXIT.OK;
  }
  const line = process.stderr.isTTY ? new StatusLine(process.stderr) : undefined;
  const secret = randomBytes(18).toString('base64url');
  const sizes = Object.fromEntries([...RESOURCES, 'datapoints' as const].map((name) => [name, count(name, values[name])]));
  const simulator = await startSimulator({ ...sizes, clients: [{ id: 'demo', secret }] });
  try {
    const env = {
      ...process.env,
      DEMO_BASE_URL: simulator.baseUrl,
      DEMO_TOKEN_URL: simulator.tokenUrl,
      DEMO_CLIENT_SECRET: secret,
    };
    const config = loadConfig(values.config, env, { out: values.out });
    const { redactor } = config;
    // Made once the job is loaded, so that it hides the job's sensitive values.
    const logger = createLogger(values['log-level'], line !== undefined, line, redactor);
    logger.info({ baseUrl: simulator.baseUrl }, `simulator started at ${simulator.baseUrl}`);
    const outDir = resolve(config.output.dir);
    let stopProgress = () => {};
    const result = await redactor.guard(async () => {
      await claimFolder(outDir);
      return runJob({
        config,
        fresh: true,
        logger,
        onStart: (run) => {
          stopProgress = startProgress(run, logger, line);
        },
      }).finally(() => stopProgress());
    });
    console.error(redactor.redact(summary(result.manifest, result.rows)));
    const shown = relative(process.cwd(), outDir) || '.';
    const folder = shown.startsWith('..') || shown.startsWith('/') ? outDir : `./${shown}`;
    const print = (text: string) => console.log(redactor.redact(text));
    print(`\nOutput in ${outDir}. Query it with DuckDB, for example:`);
    print(
      `  duckdb -c "SELECT type, count(*) AS events, min(startTime), max(startTime) FROM read_parquet('${folder}/events/*/*.parquet') GROUP BY type ORDER BY events DESC"`,
    );
    print(
      `  duckdb -c "SELECT sourceType, targetType, count(*) AS links FROM read_parquet('${folder}/relationships/*/*.parquet') GROUP BY ALL ORDER BY links DESC"`,
    );
    print(
      `  duckdb -c "SELECT timeseriesId, any_value(externalId), count(*) AS points, min(timestamp), max(timestamp), avg(value) FILTER (isfinite(value)) AS mean FROM read_parquet('${folder}/datapoints/*/*.parquet') GROUP BY ALL ORDER BY points DESC LIMIT 5"`,
    );
    return result.state === 'complete' ? EXIT.OK : EXIT.FAILED;
  } finally {
    await simulator.close();
  }
}

/** A collection's size flag: a whole number of items (or of datapoints). */
function count(name: Resource | 'datapoints', text: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`demo: --${name} expects a whole number of items, got '${text}'.`);
  return Number(text);
}

/**
 * The demo starts over in its folder, so it takes only a folder that holds nothing of the user's:
 * a new or empty one, which it marks as its own, or one it marked before.
 */
async function claimFolder(outDir: string): Promise<void> {
  const info = await ifFound(stat(outDir), outDir);
  if (info !== undefined && !info.isDirectory()) {
    throw new UsageError(`demo: ${outDir} is a file. Give the demo a folder of its own with --out DIR (npm start -- --out DIR).`);
  }
  const names = info === undefined ? [] : await readdir(outDir);
  if (names.length > 0 && !names.includes(DEMO_MARKER)) {
    const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ', ...' : '');
    throw new UsageError(
      `demo: ${outDir} holds files the demo did not write (${shown}); it starts over in its folder, so it only takes an empty folder or its own earlier output. Choose another folder: bulk-extract demo --out DIR (npm start -- --out DIR).`,
    );
  }
  await mkdir(outDir, { recursive: true });
  // Replaced, never written through: a link left at the marker's name stays as it points.
  await writeFileAtomic(join(outDir, DEMO_MARKER), 'The output of `bulk-extract demo` (npm start), which the next demo replaces.\n');
}
