import { streamKind } from '../kinds/index.js';
import type { DryRunClient, DryRunLines, DryRunStream } from '../partition/index.js';
import type { StreamInspection } from './inspect-run.js';

/**
 * A stream's lines of the dry run, written by its kind from what the inspection found and the
 * words the CLI gives it (its first request shown, what its runs write, what this run does).
 */
export function dryRunLines(
  client: DryRunClient,
  { plan, request, pointWindow, metadataColumns }: StreamInspection,
  words: Pick<DryRunStream, 'listed' | 'written' | 'since' | 'action'>,
): Promise<DryRunLines> {
  return streamKind(plan.resource).dryRun(client, { plan, request, pointWindow, metadataColumns, ...words });
}
