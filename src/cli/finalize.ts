import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { destinationOf, finalizeJob } from '../export/index.js';
import { createLogger } from '../log.js';
import { EXIT } from './exit-codes.js';
import { withUsage } from './parse-flags.js';

export const FINALIZE_USAGE = `Usage: bulk-extract finalize --config FILE [--out DIR]

Ends a split job (run --shards K) whose workers are all complete: merges the workers' checkpoints
and manifests into the output folder's, seals incremental run folders and writes _SUCCESS. The last
worker to finish does this itself; run it by hand when that worker stopped before it could.

Exit codes: 0 finalized (or no split job in the folder), 1 workers are not complete or still
running (run them: they resume), 2 usage/config error, 75 another run holds the output folder
for over 5 minutes (nothing was changed; that run ends the split job).
`;

const FLAGS = {
  'config': { type: 'string', short: 'c' },
  'out': { type: 'string' },
  'log-level': { type: 'string', default: 'info' },
  'help': { type: 'boolean', short: 'h' },
} as const;

export async function runFinalize(argv: string[]): Promise<number> {
  const { values } = withUsage(FINALIZE_USAGE, () => parseArgs({ args: argv, strict: true, options: FLAGS }));
  if (values.help) {
    console.log(FINALIZE_USAGE);
    return EXIT.OK;
  }
  if (values.config === undefined) throw new UsageError(`--config FILE is required.\n\n${FINALIZE_USAGE}`);
  const config = loadConfig(values.config, process.env, { out: values.out });
  const { redactor } = config;
  const outDir = destinationOf(config);
  const logger = createLogger(values['log-level'], undefined, undefined, redactor);
  const outcome = await redactor.guard(() => finalizeJob(config, logger));
  const say = (text: string) => console.error(redactor.redact(text));
  switch (outcome.state) {
    case 'none':
      say(`bulk-extract finalize: ${outDir} has no split job in progress; nothing to do.`);
      return EXIT.OK;
    case 'merged':
      say(
        `bulk-extract finalize: merged ${outcome.agreement.count} workers into ${outDir}: ${Object.values(outcome.manifest.streams)
          .reduce((sum, s) => sum + s.rows, 0)
          .toLocaleString('en-US')} rows, complete.`,
      );
      return EXIT.OK;
    case 'busy':
      say(
        `bulk-extract finalize: workers ${outcome.running.join(', ')} of ${outcome.agreement.count} are running in ${outDir}; the last to finish ends the run itself.`,
      );
      return EXIT.FAILED;
    case 'incomplete':
      say(
        `bulk-extract finalize: workers ${outcome.incomplete.join(', ')} of ${outcome.agreement.count} are not complete in ${outDir}: run them (run --shard I/${outcome.agreement.count} resumes worker I), or run without --shard to finish their partitions in one process.`,
      );
      return EXIT.FAILED;
  }
}
