/** Positions in a project's event log, as clients name them (resume frames, ?since=). */

/** A non-negative safe integer, and nothing that merely converts to one (null, [], "1e3"). */
export const isSeq = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/** The same written in a query string: decimal digits only. */
export function parseSeq(text: string): number | null {
  if (!/^\d{1,16}$/.test(text)) return null;
  const n = Number(text);
  return isSeq(n) ? n : null;
}
