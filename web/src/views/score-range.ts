/** The time axis of a chart of scans (in seconds): the scans' own span, or the day around a single one. */
const HALF_DAY = 12 * 60 * 60;

export function timeRange(min: number, max: number): [number, number] {
  return min === max ? [min - HALF_DAY, max + HALF_DAY] : [min, max];
}
