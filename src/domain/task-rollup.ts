/**
 * The task roll-ups' arithmetic (pure): the log-scale buckets the roll-up trigger (migrations 0032, 0038) sorts each done task's time into,
 * and a median read back from them. The buckets are fixed so that days, types and projects add up bucket by bucket.
 */

/** Bucket b (0..13) holds durations under 60·2^b seconds (and at least the bucket before's bound); 14 holds the rest. */
export const DURATION_BUCKETS = 15;
export const upperBoundOf = (bucket: number): number => 60 * 2 ** bucket;
const lowerBoundOf = (bucket: number): number => (bucket === 0 ? 1 : upperBoundOf(bucket - 1));

/**
 * The median of the durations counted in `histogram` (count per bucket), in seconds, or null for none. Within the
 * median's bucket the durations are taken as spread evenly on a log scale, so the answer is within that bucket's
 * bounds, never outside them: the most a fixed histogram can tell.
 */
export function medianSeconds(histogram: ReadonlyMap<number, number>): number | null {
  let total = 0;
  for (const n of histogram.values()) total += n;
  if (total === 0) return null;
  const middle = total / 2;
  let below = 0;
  for (let b = 0; b < DURATION_BUCKETS; b++) {
    const n = histogram.get(b) ?? 0;
    if (n > 0 && below + n >= middle) {
      const low = lowerBoundOf(b);
      const high = b === DURATION_BUCKETS - 1 ? low * 2 : upperBoundOf(b);
      const within = (middle - below) / n;
      return Math.round(low * (high / low) ** within);
    }
    below += n;
  }
  return null;
}

/** A share as a fraction rounded to three places, 0 when there is nothing to divide. */
export const rateOf = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 1000) / 1000);

/** The UTC days from `days - 1` days before `today` to it, oldest first (`YYYY-MM-DD`). */
export function daysUpTo(today: string, days: number): string[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) => new Date(end - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}
