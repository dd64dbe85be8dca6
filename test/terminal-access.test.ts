/** The terminal's access checks on their own: what a change reported during a read does to the answer a frame gets. */
import { describe, expect, it } from "vitest";
import { AccessChecks, type TerminalAccess } from "../src/server-link/terminal-access";

const WRITER: TerminalAccess = { watch: true, write: true };
const VIEWER: TerminalAccess = { watch: true, write: false };

/** A read the test answers when it likes, and how many reads were made. */
function controlledReads() {
  const answers: ((access: TerminalAccess) => void)[] = [];
  const read = () => new Promise<TerminalAccess>((resolve) => answers.push(resolve));
  return { read, answers };
}

describe("terminal access checks", () => {
  it("reads again when the person's access changed while it was being read, and acts on the new answer", async () => {
    const { read, answers } = controlledReads();
    const checks = new AccessChecks<{ userId: string }>(read);
    const ws = new WebSocketPair()[0];
    const viewer = { userId: "u1" };
    const first = checks.of(ws, viewer);
    // The person is made a viewer while their access is on its way from D1, and the read then answers what it saw before.
    checks.forgetUser("u1", () => viewer);
    answers[0]!(WRITER);
    await new Promise((r) => setTimeout(r, 0));
    expect(answers).toHaveLength(2);
    answers[1]!(VIEWER);
    expect(await first).toEqual(VIEWER);
    // The second answer is the one kept.
    expect(await checks.of(ws, viewer)).toEqual(VIEWER);
    expect(answers).toHaveLength(2);
  });

  it("shares one read among the frames that arrive while it is under way, and keeps its answer", async () => {
    const { read, answers } = controlledReads();
    const checks = new AccessChecks<{ userId: string }>(read);
    const ws = new WebSocketPair()[0];
    const frames = [checks.of(ws, { userId: "u2" }), checks.of(ws, { userId: "u2" }), checks.of(ws, { userId: "u2" })];
    await new Promise((r) => setTimeout(r, 0));
    expect(answers).toHaveLength(1);
    answers[0]!(WRITER);
    expect(await Promise.all(frames)).toEqual([WRITER, WRITER, WRITER]);
    expect(await checks.of(ws, { userId: "u2" })).toEqual(WRITER);
    expect(answers).toHaveLength(1);
  });
});
