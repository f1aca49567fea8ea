import type { HttpStatusError } from '../../http/errors.js';

/**
 * The platform refused the cursor a partition resumed from (400: expired, or from another
 * deployment): the partition is read again from its first page, its shards deleted first.
 */
export class ResumeCursorRefused extends Error {
  constructor(override readonly cause: HttpStatusError) {
    super(cause.message);
  }
}
