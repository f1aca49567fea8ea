import type { Links } from './links.js';
import { externalIdAt, ItemSet } from './item-set.js';
import { addSecondLabel, generateGeoLocation, type GeoLocation, generateMetadata } from './shared.js';
import { DIRECTORIES, FILE_KINDS, LABELS, METADATA_WORDS, SOURCES } from './vocabulary.js';

/** File ids are `FILE_ID_BASE + index * FILE_ID_STRIDE`: above 2^32, below 2^53, unique. */
export const FILE_ID_BASE = 6_000_000_000_000_000;
export const FILE_ID_STRIDE = 7901;

const DAY_MS = 86_400_000;

export interface GeneratedFile {
  id: number;
  externalId?: string;
  name: string;
  directory?: string;
  source?: string;
  mimeType?: string;
  metadata?: Record<string, string>;
  assetIds?: number[];
  dataSetId?: number;
  sourceCreatedTime?: number;
  sourceModifiedTime?: number;
  securityCategories?: number[];
  labels?: { externalId: string }[];
  geoLocation?: GeoLocation;
  instanceId?: { space: string; externalId: string };
  uploaded: boolean;
  uploadedTime?: number;
  createdTime: number;
  lastUpdatedTime: number;
}

/** Files (their metadata), linked to assets; most uploaded. */
export class FileSet extends ItemSet<GeneratedFile> {
  constructor(seed: number, count: number, links: Links) {
    super('files', seed, count, links, 0xf11e);
  }

  idOf(index: number): number {
    return FILE_ID_BASE + index * FILE_ID_STRIDE;
  }

  externalIdOf(index: number): string {
    return externalIdAt('FI', index);
  }

  protected generate(index: number, includeMetadata: boolean): GeneratedFile {
    const rng = this.start(index);
    const times = this.times(index, rng);
    const [extension, mimeType] = rng.pick(FILE_KINDS);
    const uploaded = rng.chance(0.85);
    const file: GeneratedFile = {
      id: this.idOf(index),
      externalId: this.externalIdOf(index),
      name: `${rng.pick(METADATA_WORDS)}-${rng.int(100_000)}.${extension}`,
      uploaded,
      ...times,
    };
    if (rng.chance(0.6)) file.directory = rng.pick(DIRECTORIES);
    if (rng.chance(0.7)) file.source = rng.pick(SOURCES);
    if (rng.chance(0.95)) file.mimeType = mimeType;
    const assetIds = this.assetIds(rng, 3);
    // The platform never lists an empty assetIds (at least one when present); the draw after an
    // empty one stays, so that the fields after it keep their values for a seed.
    if (assetIds.length > 0) file.assetIds = assetIds;
    else rng.chance(0.1);
    const dataSetId = this.dataSetId(rng, 0.8);
    if (dataSetId !== undefined) file.dataSetId = dataSetId;
    if (uploaded) file.uploadedTime = times.createdTime + rng.int(DAY_MS);
    if (rng.chance(0.5)) {
      file.sourceCreatedTime = times.createdTime - rng.int(365 * DAY_MS);
      file.sourceModifiedTime = file.sourceCreatedTime + rng.int(30 * DAY_MS);
    }
    if (rng.chance(0.03)) file.securityCategories = [100 + rng.int(3)];
    if (rng.chance(0.15)) file.labels = [{ externalId: rng.pick(LABELS) }];
    const metadata = generateMetadata(rng);
    if (includeMetadata) file.metadata = metadata;
    if (rng.chance(0.1)) file.geoLocation = generateGeoLocation(rng);
    if (rng.chance(0.1)) file.instanceId = { space: 'sp_files', externalId: this.externalIdOf(index) };
    addSecondLabel(rng, file.labels);
    return file;
  }
}
