/** HTTP Range (RFC 9110 §14) for one byte range: what part of an object of `size` bytes a request wants. */
export type ByteRange = { offset: number; length: number };

/** null: no usable Range header (serve everything); "unsatisfiable": 416. */
export function parseByteRange(header: string | null, size: number): ByteRange | "unsatisfiable" | null {
  if (!header) return null;
  const match = header.trim().match(/^bytes=(\d*)-(\d*)$/);
  // Several ranges, or another unit: serving the whole object is allowed.
  if (!match) return header.trim().startsWith("bytes=") && !header.includes(",") ? "unsatisfiable" : null;
  const [, from, to] = match;
  if (from === "" && to === "") return "unsatisfiable";
  if (from === "") {
    const suffix = Number(to);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    const length = Math.min(suffix, size);
    return { offset: size - length, length };
  }
  const offset = Number(from);
  const last = to === "" ? size - 1 : Math.min(Number(to), size - 1);
  if (offset >= size || last < offset) return "unsatisfiable";
  return { offset, length: last - offset + 1 };
}
