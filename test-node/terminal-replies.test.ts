/**
 * The dashboard terminal answers none of the queries a session prints (web/src/terminal-replies.ts), checked on
 * xterm.js itself: what it would have typed back without the handlers, nothing with them, while the output around the
 * queries, the sequences that act rather than ask, and what a person types all go on as before.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { answerNoQueries, isFocusReport, type QueryParser } from "../web/src/terminal-replies";

/** The part of xterm.js's Terminal used here; loaded untyped, as its typings bring the DOM's into the whole project. */
interface XtermTerminal {
  parser: QueryParser;
  modes: { bracketedPasteMode: boolean };
  buffer: { active: { getLine(y: number): { translateToString(trimRight: boolean): string } | undefined } };
  onData(listener: (data: string) => void): void;
  onTitleChange(listener: (title: string) => void): void;
  write(data: string, done: () => void): void;
  input(data: string): void;
}
const { Terminal } = createRequire(import.meta.url)("@xterm/xterm") as { Terminal: new (options: object) => XtermTerminal };

/** Every query xterm.js 6 answers, as tmux and the agents' TUIs send them. */
const QUERIES = [
  "\x1b[c", // primary device attributes
  "\x1b[0c",
  "\x1b[>c", // secondary: tmux asks on attaching, the `0;276;0c` that reached sessions
  "\x1b[>0c",
  "\x1b[=c", // tertiary
  "\x1b[5n", // status report
  "\x1b[6n", // cursor position
  "\x1b[?6n",
  "\x1b[4$p", // DECRQM
  "\x1b[?2004$p",
  "\x1b[>q", // XTVERSION
  "\x1b[18t", // text area size
  "\x1b[14t",
  "\x1b[16t",
  "\x1bP$qm\x1b\\", // DECRQSS
  "\x1b]10;?\x07", // foreground, background, cursor and palette colours
  "\x1b]11;?\x1b\\",
  "\x1b]12;?\x07",
  "\x1b]4;1;?\x07",
].join("");

function terminal(quiet: boolean) {
  // The title stack acts only where it is allowed.
  const term = new Terminal({ cols: 80, rows: 10, windowOptions: { pushTitle: true, popTitle: true } });
  if (quiet) answerNoQueries(term.parser);
  const sent: string[] = [];
  term.onData((data) => isFocusReport(data) || sent.push(data));
  const write = (data: string) => new Promise<void>((resolve) => term.write(data, resolve));
  const line = (y: number) => term.buffer.active.getLine(y)?.translateToString(true) ?? "";
  return { term, sent, write, line };
}

describe("the terminal's answers to queries", () => {
  it("would type answers into the session without the handlers (the check can fail)", async () => {
    const { sent, write } = terminal(false);
    await write(`before${QUERIES}after`);
    expect(sent).toContain("\x1b[>0;276;0c");
    expect(sent).toContain("\x1b[?1;2c");
    expect(sent).toContain("\x1b[1;7R");
  });

  it("answers none of them with the handlers, and still shows the output around them", async () => {
    const { sent, write, line } = terminal(true);
    for (let visit = 0; visit < 3; visit++) await write(`before${QUERIES}after\r\n`);
    expect(sent).toEqual([]);
    expect([line(0), line(1), line(2)]).toEqual(["beforeafter", "beforeafter", "beforeafter"]);
  });

  it("leaves the sequences that act rather than ask to xterm.js: colours, modes, the title stack, the cursor", async () => {
    const { term, sent, write, line } = terminal(true);
    const titles: string[] = [];
    term.onTitleChange((t) => titles.push(t));
    await write("\x1b]2;first\x07\x1b[22t\x1b]2;second\x07\x1b[23t");
    expect(titles).toEqual(["first", "second", "first"]);
    await write("\x1b[?2004h\x1b[3;5Hx\x1b[31mred\x1b[0m");
    expect(term.modes.bracketedPasteMode).toBe(true);
    expect(line(2)).toBe("    xred");
    expect(sent).toEqual([]);
  });

  it("sends what a person types, keys whose sequences look like answers included", async () => {
    const { term, sent, write } = terminal(true);
    // Focus reporting on: the report xterm.js sends at once is not typing.
    await write("\x1b[?1004h");
    term.input("ls -la\r");
    // Ctrl+F3 is CSI 1;5R, the shape of a cursor position report; Ctrl+Up another CSI sequence.
    term.input("\x1b[1;5R");
    term.input("\x1b[1;5A");
    term.input("Two endpoints, REST\rcontracts");
    expect(sent).toEqual(["ls -la\r", "\x1b[1;5R", "\x1b[1;5A", "Two endpoints, REST\rcontracts"]);
  });

  it("tells focus reports apart from keys", () => {
    expect(isFocusReport("\x1b[I")).toBe(true);
    expect(isFocusReport("\x1b[O")).toBe(true);
    for (const key of ["\x1bOP", "\x1b[A", "I", "\x1b[Ix", "\x1b"]) expect(isFocusReport(key)).toBe(false);
  });
});
