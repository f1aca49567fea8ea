import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.js';
import { outputPaths } from '../export/output-target.js';
import { runJob } from '../export/run-job.js';
import { createLogger } from '../log.js';
import { startSimulator } from '../simulator/server.js';
import { EXIT } from './exit-codes.js';
import { withUsage } from './parse-flags.js';
import { startProgress } from './progress.js';
import { summary } from './run.js';

export const DEMO_USAGE = `Usage: bulk-extract demo [--config config/demo.yaml] [--assets N] [--events N]

Starts the built-in simulator on 127.0.0.1, exports the demo job into ./out from scratch (Parquet
and NDJSON), prints the summary and how to query the result with DuckDB. This is \`npm start\`.
`;

const FLAGS = {
  'config': { type: 'string', default: 'config/demo.yaml' },
  'assets': { type: 'string', default: '20000' },
  'events': { type: 'string', default: '200000' },
  'log-level': { type: 'string', default: 'info' },
  'help': { type: 'boolean', short: 'h' },
} as const;

export async function runDemo(argv: string[]): Promise<number> {
  const { values } = withUsage(DEMO_USAGE, () => parseArgs({ args: argv, strict: true, options: FLAGS }));
  if (values.help) {
    console.log(DEMO_USAGE);
    return EXIT.OK;
  }
  const logger = createLogger(values['log-level']);
  const secret = randomBytes(18).toString('base64url');
  const simulator = await startSimulator({
    assets: Number(values.assets),
    events: Number(values.events),
    clients: [{ id: 'demo', secret }],
  });
  try {
    logger.info({ baseUrl: simulator.baseUrl }, 'simulator started');
    const config = loadConfig(values.config, {
      ...process.env,
      DEMO_BASE_URL: simulator.baseUrl,
      DEMO_TOKEN_URL: simulator.tokenUrl,
      DEMO_CLIENT_SECRET: secret,
    });
    let stopProgress = () => {};
    const result = await runJob({
      config,
      fresh: true,
      logger,
      onStart: (run) => {
        stopProgress = startProgress(run, logger, process.stderr.isTTY);
      },
    }).finally(() => stopProgress());
    console.error(summary(result.manifest, result.rows));
    const { outDir } = outputPaths(config);
    console.log(`\nOutput in ${outDir}. Query it with DuckDB, for example:`);
    console.log(
      `  duckdb -c "SELECT type, count(*) AS events, min(startTime), max(startTime) FROM read_parquet('${config.output.dir.replace(/\/$/, '')}/events/*/*.parquet') GROUP BY type ORDER BY events DESC"`,
    );
    return result.state === 'complete' ? EXIT.OK : EXIT.FAILED;
  } finally {
    await simulator.close();
  }
}
