import { OutputError } from '../errors.js';

/**
 * The result of a file-system call on `path`, or undefined when the path does not exist. Any other
 * failure (EACCES, EIO) is an OutputError naming the path: a file that cannot be read is not a file
 * that is absent.
 */
export async function ifFound<T>(call: Promise<T>, path: string): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    const message = (error as Error).message;
    const why = code !== undefined && message.startsWith(code) ? message : `${code ?? 'error'}: ${message}`;
    throw new OutputError(`Cannot read ${path} (${why}).`, { cause: error });
  }
}
