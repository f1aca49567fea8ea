import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../errors.js';

/** node:util parseArgs in strict mode; a bad flag becomes a UsageError followed by the command's usage. */
export function parseFlags<const O extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: O,
  usage: string,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals, options });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${usage}`, { cause: error });
  }
}
