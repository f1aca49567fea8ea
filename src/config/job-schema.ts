import { z } from 'zod';
import { sourceSchema } from './source-schema.js';

export const RESOURCES = ['assets', 'events'] as const;
export type Resource = (typeof RESOURCES)[number];
export const FORMATS = ['parquet', 'ndjson'] as const;
export type Format = (typeof FORMATS)[number];

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const TIME_EXPECTED = 'expected epoch milliseconds (an integer >= 0) or an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00Z';

/** Epoch milliseconds, given as a number or an ISO 8601 date-time with a zone. */
const time = z
  .union([z.number().int().min(0), z.string()], { error: TIME_EXPECTED })
  .transform((value, ctx) => {
    if (typeof value === 'number') return value;
    const ms = ISO_DATE_TIME.test(value) && isCalendarDate(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(ms) || ms < 0) {
      ctx.addIssue({ code: 'custom', message: `${TIME_EXPECTED}; '${value}' is not one` });
      return z.NEVER;
    }
    return ms;
  });

/** Date.parse rolls 2024-02-30 over into March; a date that does not exist is refused instead. */
function isCalendarDate(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const assetFilter = z.strictObject({ minLastUpdatedTime: time.optional(), maxLastUpdatedTime: time.optional() });
const eventFilter = assetFilter.extend({
  type: z.string().min(1).optional(),
  subtype: z.string().min(1).optional(),
  source: z.string().min(1).optional(),
  minStartTime: time.optional(),
  maxStartTime: time.optional(),
});

const common = {
  /** Names the output folder and the checkpoint entry; defaults to the resource. */
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lowercase letters, digits, _ and -, starting with a letter or digit')
    .optional(),
  /** Parallel cursor chains (`partition=m/n`); 1 sends no partition parameter. */
  partitions: z.number().int().min(1).max(10).default(10),
  /** Items per page, 1..1000. */
  limit: z.number().int().min(1).max(1000).default(1000),
  /** Overrides output.formats for this stream. */
  formats: z.array(z.enum(FORMATS)).min(1).optional(),
};

export const streamSchema = z.discriminatedUnion('resource', [
  z.strictObject({ resource: z.literal('assets'), filter: assetFilter.default({}), ...common }),
  z.strictObject({ resource: z.literal('events'), filter: eventFilter.default({}), ...common }),
]);

export const outputSchema = z.strictObject({
  /** Output folder, relative to the working directory. */
  dir: z.string().min(1).default('./out'),
  formats: z.array(z.enum(FORMATS)).min(1).default(['parquet']),
  parquet: z
    .strictObject({
      compression: z.enum(['zstd', 'snappy', 'none']).default('zstd'),
      /** Rows per row group. */
      rowGroupRows: z.number().int().min(1000).max(10_000_000).default(100_000),
    })
    .prefault({}),
  ndjson: z.strictObject({ compression: z.enum(['none', 'gzip']).default('none') }).prefault({}),
  /** A shard is closed at the first page boundary past either limit. */
  shard: z
    .strictObject({
      maxRows: z.number().int().min(1).default(1_000_000),
      maxBytes: z.number().int().min(1024).default(256 * 1024 * 1024),
    })
    .prefault({}),
});

export const jobSchema = z
  .strictObject({
    source: sourceSchema,
    /** What to export; `run` needs at least one. */
    streams: z.array(streamSchema).default([]),
    output: outputSchema.prefault({}),
    /** Checkpoint file; default `<output.dir>/_checkpoint.json`. */
    checkpoint: z.string().min(1).optional(),
  })
  .superRefine((job, ctx) => {
    const seen = new Set<string>();
    job.streams.forEach((stream, i) => {
      const name = stream.name ?? stream.resource;
      if (seen.has(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['streams', i, 'name'],
          message: `stream name '${name}' is used twice; give each stream of the same resource its own name`,
        });
      }
      seen.add(name);
    });
  });

export type StreamConfig = z.output<typeof streamSchema>;
export type OutputConfig = z.output<typeof outputSchema>;
