/**
 * Edit distance between two keys, case-insensitive: insertions, deletions, substitutions and
 * swaps of two neighbouring letters count 1 each (optimal string alignment, a restricted
 * Damerau–Levenshtein distance).
 */
export function keyDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  // rows[i][j]: distance between the first i letters of s and the first j of t.
  const rows: number[][] = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= s.length; i++) {
    const row = rows[i] ?? [];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      row[j] = best;
    }
  }
  return at(s.length, t.length);
}

/**
 * Most edits for a key to count as a typo of another: a third of its length, at least 1 and at
 * most 3 (`dri` → `dir`, `partitons` → `partitions`; `sink` is not `source`).
 */
export function maxTypoDistance(key: string): number {
  return Math.min(3, Math.max(1, Math.floor(key.length / 3)));
}

/** Letters a key must have to be taken for the start of a longer one (`allowExpiredCursors`). */
const SHORTENED_MIN = 8;

/**
 * The known key closest to `unknown` (the first of equals), or undefined when none is close
 * enough; failing a typo, the one known key that `unknown` is the start of, when it is long
 * enough to say so (`allowExpiredCursors` → `allowExpiredCursorsAndAcceptMissedDeletes`).
 */
export function suggestKey(unknown: string, known: Iterable<string>): string | undefined {
  let best: { key: string; distance: number } | undefined;
  const longer: string[] = [];
  for (const key of known) {
    if (key === unknown) continue;
    const distance = keyDistance(unknown, key);
    const closer = best === undefined || distance < best.distance;
    if (distance <= maxTypoDistance(unknown) && closer) best = { key, distance };
    if (unknown.length >= SHORTENED_MIN && key.toLowerCase().startsWith(unknown.toLowerCase())) longer.push(key);
  }
  return best?.key ?? (longer.length === 1 ? longer[0] : undefined);
}
