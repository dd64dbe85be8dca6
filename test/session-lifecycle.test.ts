/** Which event a session's change of status makes (pure), table by table. */
import { describe, expect, it } from "vitest";
import { isFinalSession, sessionEventOf } from "../src/domain/session-lifecycle";

describe("session lifecycle", () => {
  it.each([
    ["starting", "running", "session_started"],
    ["error", "running", "session_started"],
    ["starting", "error", "session_error"],
    ["running", "closed", "session_closed"],
    ["starting", "closed", "session_closed"],
    ["running", "running", null],
    ["closed", "closed", null],
    ["running", "starting", null],
  ] as const)("%s → %s: %s", (from, to, event) => {
    expect(sessionEventOf(from, to)).toBe(event);
  });

  it("ends at closed and error only", () => {
    expect(["closed", "error"].every(isFinalSession)).toBe(true);
    expect(["starting", "running"].some(isFinalSession)).toBe(false);
  });
});
