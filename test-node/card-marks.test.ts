/** A board card's initials, colour and age. */
import { describe, expect, it } from "vitest";
import { ageLabel, hueOf, initialsOf } from "../web/src/card-marks";

describe("card marks", () => {
  it("takes two letters from a name", () => {
    expect(initialsOf("builder")).toBe("BU");
    expect(initialsOf("builder-worker")).toBe("BW");
    expect(initialsOf("reviewBot")).toBe("RB");
    expect(initialsOf("ana maría")).toBe("AM");
    expect(initialsOf("x")).toBe("X");
  });

  it("gives a name the same hue each time, and others mostly another", () => {
    expect(hueOf("builder")).toBe(hueOf("builder"));
    const hues = new Set(["a", "b", "builder", "reviewer", "tester", "planner"].map(hueOf));
    expect(hues.size).toBeGreaterThan(4);
    for (const h of hues) (expect(h).toBeGreaterThanOrEqual(0), expect(h).toBeLessThan(360));
  });

  it("says an age in a few characters", () => {
    const m = 60_000;
    expect([30_000, 12 * m, 3 * 60 * m + 5, 5 * 24 * 60 * m, 60 * 24 * 60 * m, 800 * 24 * 60 * m].map(ageLabel)).toEqual([
      "now",
      "12m",
      "3h",
      "5d",
      "8w",
      "2y",
    ]);
  });
});
