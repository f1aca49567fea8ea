import type { z } from 'zod';
import { CheckpointError } from '../../errors.js';

/**
 * The one way a state file of an output (checkpoint, manifest, a run's manifest, a split job's
 * plan, a worker's files) is read: its text parsed as JSON and checked against its schema.
 * Any failure is a CheckpointError that names the file, what it should be and what is wrong.
 */
export function parseStateFile<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
  what: string,
  advice: Advice = STATE_ADVICE,
): z.output<S> {
  return checkStateValue(parseJson(text, file, advice), file, schema, what, advice);
}

/** What a message about a damaged file of one kind says after naming the file and the fault. */
export interface Advice {
  /** After "is not valid JSON (damaged or truncated): ". */
  notJson: string;
  /** After "is not <what> (<path>: <problem>). ". */
  invalid: string;
}

/** The advice for the output's state: the files a run goes on from. */
const STATE_ADVICE: Advice = {
  notJson: 'it was not written by a complete run of bulk-extract. Move it away to start over, or run with --fresh.',
  invalid: 'Move it away, or run with --fresh.',
};

/** A state file's text as JSON; text that is not JSON names the file. */
export function parseJson(text: string, file: string, advice: Advice = STATE_ADVICE): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CheckpointError(`${file} is not valid JSON (${text.length === 0 ? 'empty' : 'damaged or truncated'}): ${advice.notJson}`, {
      cause: error,
    });
  }
}

/** A state file's parsed value checked against its schema (`what` it should be, e.g. "a bulk-extract checkpoint"). */
export function checkStateValue<S extends z.ZodType>(
  value: unknown,
  file: string,
  schema: S,
  what: string,
  advice: Advice = STATE_ADVICE,
): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new CheckpointError(
      `${file} is not ${what} (${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}).${advice.invalid === '' ? '' : ` ${advice.invalid}`}`,
    );
  }
  return result.data;
}
