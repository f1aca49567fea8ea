import { findJsonProblem, MAX_JSON_DEPTH } from '../util/json-limits.js';
import { jsonPathAt } from '../util/json-path.js';
import { BadResponseError, type RequestContext } from './errors.js';

/**
 * Refuses an answer's bytes before anything parses them when they nest deeper than MAX_JSON_DEPTH
 * or hold a number past the range of a double (findJsonProblem): a BadResponseError naming the
 * request and where in the answer, the item included (`items[3] (id 42).metadata`). Every answer of
 * the platform and of the identity provider that is parsed passes here first, whatever route reads
 * it, so that no parse, walk or writer meets either; the scans that read pages from their bytes
 * instead leave any such answer to the parse, so to this check (JsonGrammar).
 */
export function checkAnswerBytes(bytes: Uint8Array, ctx: RequestContext): void {
  const problem = findJsonProblem(bytes);
  if (problem === undefined) return;
  const where = jsonPathAt(bytes, problem.at);
  if (problem.kind === 'depth') {
    throw new BadResponseError(
      `The answer is nested deeper than ${MAX_JSON_DEPTH} levels at ${where} (the platform's answers are a few levels deep): refusing it unread`,
      ctx,
    );
  }
  const token = Buffer.from(bytes.buffer, bytes.byteOffset + problem.at, Math.min(problem.end - problem.at, 40)).toString('latin1');
  throw new BadResponseError(
    `The answer holds a number past the range of a double at ${where}: ${token}${problem.end - problem.at > 40 ? '…' : ''}; ` +
    'refusing it rather than writing it as infinity or null',
    ctx,
  );
}

/**
 * JSON.parse of an answer that is not the platform's data (an error body), or undefined when it is
 * not JSON or would fail checkAnswerBytes.
 */
export function parseIfSound(bytes: Buffer): unknown {
  if (findJsonProblem(bytes) !== undefined) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
