import type { RELATIONSHIP_TYPES } from '../../resources/index.js';
import type { Rng } from '../random.js';
import type { Links } from './links.js';
import { externalIdAt, ItemSet } from './item-set.js';
import { addSecondLabel } from './shared.js';
import { LABELS } from './vocabulary.js';

const DAY_MS = 86_400_000;

export type RelationshipType = (typeof RELATIONSHIP_TYPES)[number];

/** A collection relationships may point into: its type and its items' externalIds. */
export interface Endpoints {
  type: RelationshipType;
  count: number;
  externalIdOf(index: number): string;
}

export interface GeneratedRelationship {
  externalId: string;
  sourceExternalId: string;
  sourceType: RelationshipType;
  targetExternalId: string;
  targetType: RelationshipType;
  startTime?: number;
  endTime?: number;
  confidence?: number;
  dataSetId?: number;
  labels?: { externalId: string }[];
  createdTime: number;
  lastUpdatedTime: number;
}

/**
 * Relationships between existing items of the other collections (by their externalIds). They have
 * no id: their key is `externalId`.
 */
export class RelationshipSet extends ItemSet<GeneratedRelationship> {
  private readonly endpoints: readonly Endpoints[];

  constructor(seed: number, count: number, links: Links, endpoints: readonly Endpoints[]) {
    super('relationships', seed, count, links, 0x4e1a);
    this.endpoints = endpoints.filter((endpoint) => endpoint.count > 0);
  }

  externalIdOf(index: number): string {
    return externalIdAt('REL', index);
  }

  /** Relationships have no description: an update changes the confidence. */
  protected override revise(item: GeneratedRelationship, revision: number): void {
    item.confidence = Math.round(1000 / (1 + revision)) / 1000;
  }

  protected generate(index: number): GeneratedRelationship {
    const rng = this.start(index);
    const times = this.times(index, rng);
    const [sourceType, sourceExternalId] = this.endpoint(rng);
    const [targetType, targetExternalId] = this.endpoint(rng);
    const relationship: GeneratedRelationship = {
      externalId: this.externalIdOf(index),
      sourceExternalId,
      sourceType,
      targetExternalId,
      targetType,
      ...times,
    };
    if (rng.chance(0.3)) {
      relationship.startTime = times.createdTime - rng.int(90 * DAY_MS);
      if (rng.chance(0.5)) relationship.endTime = relationship.startTime + rng.int(180 * DAY_MS);
    }
    if (rng.chance(0.7)) relationship.confidence = rng.chance(0.2) ? 1 : Math.round(rng.next() * 1000) / 1000;
    const dataSetId = this.dataSetId(rng, 0.6);
    if (dataSetId !== undefined) relationship.dataSetId = dataSetId;
    if (rng.chance(0.1)) relationship.labels = [{ externalId: rng.pick(LABELS) }];
    addSecondLabel(rng, relationship.labels);
    return relationship;
  }

  /** An existing item of one of the collections (assets when there is nothing at all). */
  private endpoint(rng: Rng): [RelationshipType, string] {
    if (this.endpoints.length === 0) return ['asset', externalIdAt('AS', 0)];
    const endpoint = rng.pick(this.endpoints);
    return [endpoint.type, endpoint.externalIdOf(rng.int(endpoint.count))];
  }
}
