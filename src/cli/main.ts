import { createRequire } from 'node:module';
import { BulkExtractError } from '../errors.js';
import { EXIT } from './exit-codes.js';
import { runSimulate } from './simulate.js';

const USAGE = `Usage: bulk-extract <command> [options]

Commands:
  simulate   Run the platform simulator (a real HTTP server on loopback) until SIGINT/SIGTERM.
             bulk-extract simulate --help for its options.

Options:
  --help, -h     Show this help.
  --version, -v  Show the version.
`;

export function version(): string {
  const require = createRequire(import.meta.url);
  return (require('../../package.json') as { version: string }).version;
}

/** Runs one CLI invocation and resolves to its exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'simulate':
        return await runSimulate(rest);
      case '--version':
      case '-v':
        console.log(version());
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
    if (error instanceof BulkExtractError && (error.code === 'E_CONFIG' || error.code === 'E_USAGE')) {
      console.error(`bulk-extract ${command}: ${error.message}`);
      return EXIT.USAGE;
    }
    throw error;
  }
}
