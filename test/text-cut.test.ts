/** Cutting text for services that refuse invalid Unicode (domain/text.ts), over arbitrary UTF-16 and emoji at every boundary. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cutText } from "../src/domain/text";

/** Any UTF-16 units, lone surrogates included, mixed with emoji (surrogate pairs and joined sequences). */
const utf16 = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)),
      fc.constantFrom("😀", "👩‍👩‍👧", "🇫🇷", "a", "é"),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(""));

describe("cutText", () => {
  it("is always well-formed, at most max units, and a prefix of the text when cut", () => {
    fc.assert(
      fc.property(utf16, fc.integer({ min: 1, max: 60 }), fc.constantFrom("", "…"), (text, max, ellipsis) => {
        const cut = cutText(text, max, ellipsis);
        expect(cut.isWellFormed()).toBe(true);
        expect(cut.length).toBeLessThanOrEqual(max);
        if (text.length <= max) {
          expect(cut).toBe(text.toWellFormed());
        } else {
          expect(cut.endsWith(ellipsis)).toBe(true);
          const kept = cut.slice(0, cut.length - ellipsis.length);
          expect(text.toWellFormed().startsWith(kept)).toBe(true);
          // At most one unit short of the room: the half of a pair that would not fit.
          expect(kept.length).toBeGreaterThanOrEqual(max - ellipsis.length - 1);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("leaves out an emoji that would be cut in half, and keeps one that fits", () => {
    expect(cutText("ab😀cd", 3)).toBe("ab");
    expect(cutText("ab😀cd", 4)).toBe("ab😀");
    expect(cutText("ab😀cd", 4, "…")).toBe("ab…");
    expect(cutText("ab😀", 4, "…")).toBe("ab😀");
    expect(cutText("a\ud83d", 5)).toBe("a\ufffd");
  });
});
