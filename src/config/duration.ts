import { z } from 'zod';

const DURATION_EXPECTED = "expected milliseconds (an integer >= 0) or a number with a unit: ms, s, m, h or d (e.g. '5m')";
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration in milliseconds, given as a number or as text with a unit ('90s', '5m'). */
export const duration = z
  .union([z.number().int().min(0), z.string()], { error: DURATION_EXPECTED })
  .transform((value, ctx) => {
    if (typeof value === 'number') return value;
    const match = /^(\d+)\s*(ms|s|m|h|d)$/.exec(value.trim());
    if (match === null) {
      ctx.addIssue({ code: 'custom', message: `${DURATION_EXPECTED}; '${value}' is not one` });
      return z.NEVER;
    }
    return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  });
