import { UsageError } from '../errors.js';

/** Runs a node:util parseArgs call; a bad flag becomes a UsageError followed by the command's usage. */
export function withUsage<T>(usage: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${usage}`, { cause: error });
  }
}
