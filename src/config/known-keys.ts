import { z } from 'zod';

type Schema = z.core.$ZodType;

/**
 * The keys a schema knows for the object at `path` of `input`, in the schema's order: the schema is
 * walked along the path through optional, default, prefault, pipe (its input side; a preprocess's
 * output), array element and object shape. A discriminated union is followed into the option that
 * the input's discriminator picks (`streams[].resource`, `auth.type`), or into all of them when it
 * picks none; a plain union into all of its options. Empty when the path leaves the schema.
 */
export function knownKeysAt(schema: Schema, input: unknown, path: readonly PropertyKey[]): string[] {
  let nodes = expand(schema, input);
  let value = input;
  for (const key of path) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[String(key)] : undefined;
    nodes = nodes.flatMap((node) => {
      const next = child(node, key);
      return next === undefined ? [] : expand(next, value);
    });
  }
  const keys = nodes.flatMap((node) => (node instanceof z.ZodObject ? Object.keys(node.shape) : []));
  return [...new Set(keys)];
}

/** The schemas that `node` stands for, given the value it meets: wrappers removed, unions opened. */
function expand(node: Schema, value: unknown): Schema[] {
  if (
    node instanceof z.ZodOptional ||
    node instanceof z.ZodNullable ||
    node instanceof z.ZodDefault ||
    node instanceof z.ZodPrefault ||
    node instanceof z.ZodNonOptional ||
    node instanceof z.ZodReadonly ||
    node instanceof z.ZodCatch
  ) {
    return expand(node.def.innerType, value);
  }
  // A preprocess is a pipe from a transform: the keys are the output side's.
  if (node instanceof z.ZodPipe) {
    return expand(node.def.in instanceof z.ZodTransform ? node.def.out : node.def.in, value);
  }
  if (node instanceof z.ZodDiscriminatedUnion) {
    const options: readonly Schema[] = node.options;
    const picked = options.filter((option) => picks(option, node.def.discriminator, value));
    return (picked.length > 0 ? picked : options).flatMap((option) => expand(option, value));
  }
  if (node instanceof z.ZodUnion) return (node.options as readonly Schema[]).flatMap((option) => expand(option, value));
  return [node];
}

function picks(option: Schema, discriminator: string, value: unknown): boolean {
  if (!(option instanceof z.ZodObject) || !isRecord(value)) return false;
  const literal: unknown = option.shape[discriminator];
  return literal instanceof z.ZodLiteral && (literal.values as ReadonlySet<unknown>).has(value[discriminator]);
}

function child(node: Schema, key: PropertyKey): Schema | undefined {
  if (node instanceof z.ZodObject) {
    const shape = node.shape as Record<string, Schema>;
    return Object.hasOwn(shape, String(key)) ? shape[String(key)] : undefined;
  }
  if (node instanceof z.ZodArray && /^\d+$/.test(String(key))) return node.element;
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
