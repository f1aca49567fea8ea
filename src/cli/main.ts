import { BulkExtractError } from '../errors.js';
import { EXIT, exitCodeOf, RESUME_HINT } from './exit-codes.js';
import { VERSION } from '../version.js';

const USAGE = `Usage: bulk-extract <command> [options]

Commands:
  run        Export the job's streams: bulk-extract run --config FILE [--fresh] [--dry-run] [--shards K].
  repair     Read back the shards; read only the damaged partitions again: bulk-extract repair --config FILE.
  finalize   End a split job whose workers are complete: bulk-extract finalize --config FILE.
  status     Progress recorded in the checkpoint: bulk-extract status --config FILE (or --out DIR).
  verify     Check an output folder against its manifest: bulk-extract verify DIR.
  auth       auth status | auth logout --config FILE: check or end the configured credential.
  demo       npm start: the simulator plus the demo export into ./demo-out, then a DuckDB example.
  simulate   Run the platform simulator (a real HTTP server on loopback) until SIGINT/SIGTERM.
             bulk-extract simulate --help for its options.

Options:
  --help, -h     Show this help.
  --version, -v  Show the version.
`;

/**
 * Runs one CLI invocation and resolves to its exit code. Each command's modules load when it runs:
 * `run` never loads the simulator, `--version` nothing but this file.
 */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'simulate':
        return await (await import('./simulate.js')).runSimulate(rest);
      case 'auth':
        return await (await import('./auth.js')).runAuth(rest);
      case 'run':
        return await (await import('./run.js')).runRun(rest);
      case 'repair':
        return await (await import('./run.js')).runRun(['--repair', ...rest]);
      case 'finalize':
        return await (await import('./finalize.js')).runFinalize(rest);
      case 'status':
        return await (await import('./status.js')).runStatus(rest);
      case 'verify':
        return await (await import('./verify.js')).runVerify(rest);
      case 'demo':
        return await (await import('./demo.js')).runDemo(rest);
      case '--version':
      case '-v':
        console.log(VERSION);
        return EXIT.OK;
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        console.log(USAGE);
        return EXIT.OK;
      default:
        console.error(`bulk-extract: unknown command '${command}'.\n\n${USAGE}`);
        return EXIT.USAGE;
    }
  } catch (error) {
    if (!(error instanceof BulkExtractError)) throw error;
    // Commands redact the job's sensitive values in what they throw (JobConfig.redactor, redactError).
    console.error(`bulk-extract ${command}: ${error.message}`);
    const code = exitCodeOf(error);
    // Stopped by a signal before it began (while it counted): nothing is lost, the same command goes on.
    if (code === EXIT.INTERRUPTED) console.error(RESUME_HINT);
    return code;
  }
}
