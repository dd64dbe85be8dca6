/**
 * A tool call's input as the permission log keeps it: at most TOOL_INPUT_BYTES of JSON. A larger one (a Write's
 * whole file, say) keeps its keys and short values, which are what rules match on (a command, a path, a URL), and
 * has its long strings cut, shorter and shorter until it fits.
 */
import { cutText } from "./text";

export const TOOL_INPUT_BYTES = 8 * 1024;

const encoder = new TextEncoder();
const bytesOf = (json: string) => (json.length * 3 <= TOOL_INPUT_BYTES ? json.length : encoder.encode(json).byteLength);

function cutStrings(value: unknown, max: number): unknown {
  if (typeof value === "string") return cutText(value, max, "…");
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, max));
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v, max)]));
  return value;
}

/** The JSON text kept for `input`, and whether anything was cut from it. */
export function keptToolInput(input: Record<string, unknown>): { json: string; truncated: boolean } {
  const whole = JSON.stringify(input);
  if (bytesOf(whole) <= TOOL_INPUT_BYTES) return { json: whole, truncated: false };
  for (let max = 4096; max >= 16; max /= 4) {
    const json = JSON.stringify(cutStrings(input, max));
    if (bytesOf(json) <= TOOL_INPUT_BYTES) return { json, truncated: true };
  }
  // Too many keys or elements to fit even so: only the start of its text is kept.
  return { json: JSON.stringify({ _truncated: cutText(whole, 1000, "…") }), truncated: true };
}
