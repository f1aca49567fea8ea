/** Data set ids are `DATA_SET_ID_BASE + index`; externalIds `DS-<index>`. */
export const DATA_SET_ID_BASE = 4_000_000_000_000;

/** A reference the platform takes in a filter: by id or by externalId. */
export type Ref = { id: number } | { externalId: string };

/**
 * What the links follow in the assets: an asset's index from its id or externalId and back, and
 * the trees they form. AssetSet, which makes the Links, is one: the shape is named here so that
 * links.ts need not import assets.ts.
 */
export interface LinkedAssets {
  /** Assets generated from the seed: an item links only to one of these. */
  readonly generated: number;
  idOf(index: number): number;
  externalIdOf(index: number): string;
  indexOfId(id: number): number | undefined;
  indexOfExternalId(externalId: string): number | undefined;
  rootIndexOf(index: number): number;
  /** Whether the asset at `index` is `top` or one of its descendants. */
  inSubtree(index: number, top: number): boolean;
}

/**
 * What items of one collection link to in the others: the assets (by index) and the data sets.
 * Time series, files, sequences and events name existing assets; every item's `dataSetId` is one
 * of the data sets.
 */
export class Links {
  constructor(
    readonly assets: LinkedAssets,
    readonly dataSets: number,
  ) {}

  dataSetIdOf(index: number): number {
    return DATA_SET_ID_BASE + index;
  }

  dataSetExternalIdOf(index: number): string {
    return `DS-${index}`;
  }

  /** The data set ids a list of references names (unknown ones name nothing). */
  dataSetIds(refs: readonly Ref[]): Set<number> {
    const ids = new Set<number>();
    for (const ref of refs) {
      if ('id' in ref) ids.add(ref.id);
      else {
        const match = /^DS-(0|[1-9]\d*)$/.exec(ref.externalId);
        if (match !== null && Number(match[1]) < this.dataSets) ids.add(this.dataSetIdOf(Number(match[1])));
      }
    }
    return ids;
  }

  /** The asset indexes a list of references names (unknown ones name nothing). */
  assetIndexes(refs: readonly Ref[]): number[] {
    const indexes: number[] = [];
    for (const ref of refs) {
      const index = 'id' in ref ? this.assets.indexOfId(ref.id) : this.assets.indexOfExternalId(ref.externalId);
      if (index !== undefined) indexes.push(index);
    }
    return indexes;
  }
}
