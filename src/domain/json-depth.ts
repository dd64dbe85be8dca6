/**
 * How deeply JSON the hub takes may nest. Parsing a value nested thousands
 * deep works, but much of what follows recurses over it (validation,
 * serialising it for a room, DataRef links) and would overflow the stack, so
 * such a value is refused where it comes in: HTTP bodies and socket frames.
 */

/** Objects and arrays inside one another, the outermost counted as 1. */
export const MAX_JSON_DEPTH = 64;

export const TOO_DEEP = `must not nest objects and arrays more than ${MAX_JSON_DEPTH} deep`;

const isContainer = (v: unknown): v is object => typeof v === "object" && v !== null;

/** Whether objects and arrays nest more than `max` deep in a value: walked with a stack of its own, never recursing. */
function nestsDeeper(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (!isContainer(v)) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The top-level member (a key, or an array's index) under which a parsed JSON value nests more than `max` deep, or null. */
export function tooDeepUnder(value: unknown, max = MAX_JSON_DEPTH): string | null {
  if (!isContainer(value)) return null;
  for (const [key, child] of Object.entries(value)) if (nestsDeeper(child, max - 1)) return key;
  return null;
}
