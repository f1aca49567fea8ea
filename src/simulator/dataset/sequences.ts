import type { Rng } from '../random.js';
import type { Links } from './links.js';
import { externalIdAt, ItemSet } from './item-set.js';
import { generateMetadata } from './shared.js';
import { ASSET_KINDS, DESCRIPTIONS, METADATA_WORDS, VALUE_TYPES } from './vocabulary.js';

/** Sequence ids are `SEQUENCE_ID_BASE + index * SEQUENCE_ID_STRIDE`: above 2^32, below 2^53, unique. */
export const SEQUENCE_ID_BASE = 8_000_000_000_000_000;
export const SEQUENCE_ID_STRIDE = 7883;

/** Sequence column ids are `SEQUENCE_COLUMN_ID_BASE + sequence index * 8 + column`: unique, below 2^53. */
export const SEQUENCE_COLUMN_ID_BASE = 9_000_000_000_000_000;

export interface GeneratedSequenceColumn {
  id: number;
  externalId?: string;
  name?: string;
  description?: string;
  valueType: (typeof VALUE_TYPES)[number];
  metadata?: Record<string, string>;
  createdTime: number;
  lastUpdatedTime: number;
}

export interface GeneratedSequence {
  id: number;
  name?: string;
  description?: string;
  assetId?: number;
  externalId?: string;
  metadata?: Record<string, string>;
  columns: GeneratedSequenceColumn[];
  createdTime: number;
  lastUpdatedTime: number;
  dataSetId?: number;
}

/** Sequences (their metadata and columns, not their rows), most on an asset. */
export class SequenceSet extends ItemSet<GeneratedSequence> {
  constructor(seed: number, count: number, links: Links) {
    super('sequences', seed, count, links, 0x5e9e);
  }

  idOf(index: number): number {
    return SEQUENCE_ID_BASE + index * SEQUENCE_ID_STRIDE;
  }

  externalIdOf(index: number): string {
    return externalIdAt('SQ', index);
  }

  protected generate(index: number, includeMetadata: boolean): GeneratedSequence {
    const rng = this.start(index);
    const times = this.times(index, rng);
    const columns = this.columns(rng, index, times.createdTime);
    const sequence: GeneratedSequence = { id: this.idOf(index), columns, ...times };
    if (rng.chance(0.95)) sequence.externalId = this.externalIdOf(index);
    if (rng.chance(0.9)) sequence.name = `${rng.pick(ASSET_KINDS)} curve ${rng.int(1000)}`;
    if (rng.chance(0.4)) sequence.description = rng.pick(DESCRIPTIONS);
    const assetId = rng.chance(0.8) ? this.assetId(rng) : undefined;
    if (assetId !== undefined) sequence.assetId = assetId;
    const dataSetId = this.dataSetId(rng, 0.8);
    if (dataSetId !== undefined) sequence.dataSetId = dataSetId;
    const metadata = generateMetadata(rng);
    if (includeMetadata) sequence.metadata = metadata;
    return sequence;
  }

  /** 1 to 6 columns, created with the sequence. */
  private columns(rng: Rng, index: number, createdTime: number): GeneratedSequenceColumn[] {
    return Array.from({ length: 1 + rng.int(6) }, (_, c) => {
      const column: GeneratedSequenceColumn = {
        id: SEQUENCE_COLUMN_ID_BASE + index * 8 + c,
        valueType: rng.pick(VALUE_TYPES),
        createdTime,
        lastUpdatedTime: createdTime + (rng.chance(0.8) ? 0 : rng.int(86_400_000)),
      };
      if (rng.chance(0.95)) column.externalId = `col-${c}`;
      if (rng.chance(0.9)) column.name = `${rng.pick(METADATA_WORDS)} ${c}`;
      if (rng.chance(0.3)) column.description = rng.pick(DESCRIPTIONS);
      if (rng.chance(0.3)) column.metadata = generateMetadata(rng);
      return column;
    });
  }
}
