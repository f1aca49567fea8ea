import { z } from 'zod';
import { formatByteSize } from '../util/format-byte-size.js';

export { formatByteSize };

const UNITS: Record<string, number> = {
  B: 1,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  KIB: 2 ** 10,
  MIB: 2 ** 20,
  GIB: 2 ** 30,
};
const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$/;

/** Bytes in `text` ("64MiB", "1.5 GB", "4096"), or undefined when it is not a size. */
export function parseByteSize(text: string): number | undefined {
  const match = SIZE.exec(text);
  if (match === null) return undefined;
  const unit = UNITS[(match[2] ?? '').toUpperCase() || 'B'];
  return unit === undefined ? undefined : Math.round(Number(match[1]) * unit);
}

/** A number of bytes, or a size with a unit: B, KB, MB, GB (powers of 1000), KiB, MiB, GiB (of 1024). */
export function byteSize(min: number) {
  const units = 'units B, KB, MB, GB, KiB, MiB, GiB';
  const message = `expected a number of bytes or a size such as "64MiB" or "1GB" (${units}), at least ${formatByteSize(min)}`;
  return z.union([
    z.number().int().min(min, message),
    z.string().transform((text, ctx) => {
      const bytes = parseByteSize(text);
      if (bytes === undefined || bytes < min) {
        ctx.addIssue({ code: 'custom', message: `${message}; got "${text}"` });
        return z.NEVER;
      }
      return bytes;
    }),
  ], { error: message });
}
