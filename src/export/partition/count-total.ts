import { AuthError, HttpStatusError, type RequestError } from '../../http/errors.js';

/**
 * A count, or undefined when the platform gives none (an error status, an answer that is not a
 * count), after `unknown` has been told why (it may throw to refuse the run instead). A refused
 * credential and every other failure are thrown.
 */
export async function countOrUnknown<T>(
  count: () => Promise<T>,
  unknown: (error: RequestError) => void,
): Promise<T | undefined> {
  try {
    return await count();
  } catch (error) {
    if (error instanceof AuthError || !(error instanceof HttpStatusError || isContentError(error))) throw error;
    unknown(error);
    return undefined;
  }
}

/** An answer that arrived but was not a count: the platform is there, the count is just unknown. */
function isContentError(error: unknown): error is RequestError {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'E_BAD_RESPONSE' || code === 'E_INVALID_JSON';
}
