import type { Logger } from '../../log.js';
import type { OutputStore } from '../../output/index.js';
import { isOwnedKey } from './layout.js';

/**
 * Empties a folder of the output that holds nothing committed (a new stream's, a run that starts
 * over, a partition read again, a pruned snapshot, a finished split job's records): the files
 * bulk-extract writes there are deleted, and any other file stays where it is, named in a warning.
 */
export async function removeOwnedTree(store: OutputStore, dir: string, logger: Logger): Promise<void> {
  const left = await store.removeTree(dir, isOwnedKey);
  if (left.length === 0) return;
  const shown = left.slice(0, 5).map((key) => store.where(key));
  logger.warn(
    { dir: store.where(dir), left: shown, count: left.length },
    `left ${left.length} file(s) in ${store.where(dir)} that bulk-extract did not write (${shown.join(', ')}${left.length > 5 ? ', ...' : ''}): they are not part of the export`,
  );
}
