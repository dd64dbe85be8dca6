import { describe, expect, it } from "vitest";
import { absoluteDate, absoluteTime } from "../web/src/time-format";

// Local times, as the formatter reads them: the checks hold in any time zone.
const now = new Date(2026, 11, 2, 16, 30);

describe("absolute times", () => {
  it("shows today's as the clock alone", () => {
    expect(absoluteTime(new Date(2026, 11, 2, 14, 5), now)).toBe("14:05");
    expect(absoluteTime(new Date(2026, 11, 2, 0, 0), now)).toBe("00:00");
    expect(absoluteTime(new Date(2026, 11, 2, 23, 59).toISOString(), now)).toBe("23:59");
  });

  it("adds the day and month to this year's, and the year to others'", () => {
    expect(absoluteTime(new Date(2026, 11, 1, 23, 59), now)).toBe("1 Dec 23:59");
    expect(absoluteTime(new Date(2026, 0, 9, 7, 3).getTime(), now)).toBe("9 Jan 07:03");
    expect(absoluteTime(new Date(2025, 11, 2, 14, 5), now)).toBe("2 Dec 2025 14:05");
    // A time still to come (an expiry) reads the same way.
    expect(absoluteTime(new Date(2026, 11, 3, 9, 0), now)).toBe("3 Dec 09:00");
    expect(absoluteTime(new Date(2027, 1, 3, 9, 0), now)).toBe("3 Feb 2027 09:00");
  });

  it("shows dates alone the same way, and no time for what is not one", () => {
    expect(absoluteDate(new Date(2026, 4, 17), now)).toBe("17 May");
    expect(absoluteDate(new Date(2024, 4, 17), now)).toBe("17 May 2024");
    expect(absoluteTime("not a time", now)).toBe("—");
  });
});
