/** JSON with object keys sorted, so equal values serialise identically whatever their key order. */
export function canonicalJson(value: unknown, map: (v: unknown) => unknown = (v) => v): string {
  return JSON.stringify(value, (_key, raw) => {
    const v = map(raw);
    return v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v;
  });
}

/** A DataRef pointer as its content: two uploads of the same bytes are the same value. */
export const contentOfPointers = (v: unknown) =>
  v && typeof v === "object" && "$dataref" in v ? { sha256: (v as { sha256?: unknown }).sha256, size: (v as { size?: unknown }).size } : v;
