/**
 * src/domain/shell-words.ts against the real thing: random folder names (quotes, `$`, backticks, backslashes, spaces,
 * line breaks, a leading `-`, non-ASCII), each made on disk and reached by `/bin/sh -c` the way hub.py's
 * `asyncio.create_subprocess_shell` runs a command, from another folder.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { fromDirectory, shellQuote } from "../src/domain/shell-words";

const base = realpathSync(mkdtempSync(join(tmpdir(), "shell-words-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Few characters, so that each name mixes several the shell treats specially. */
const char = fc.constantFrom("a", "Z", " ", "'", '"', "$", "`", "\\", "!", "*", "?", "-", ";", "&", "|", "(", ")", "\n", "\t", "é", "😀", "~", "#");
/** A folder's name: no `/` (a separator) nor NUL (which no path holds), never `.` or `..`. */
const folderName = fc
  .array(char, { minLength: 1, maxLength: 12 })
  .map((cs) => cs.join(""))
  .filter((n) => n !== "." && n !== "..");

const sh = (script: string, cwd = base) => spawnSync("/bin/sh", ["-c", script], { cwd, encoding: "utf8", maxBuffer: 64 << 20 });

describe("shellQuote", () => {
  it("is one word the shell reads back as exactly the text", () => {
    const texts = fc.sample(
      fc.string({ unit: "binary", maxLength: 40 }).filter((s) => !s.includes("\0") && s.isWellFormed()),
      { numRuns: 3000, seed: 7 },
    );
    // One shell for every case, each printed whole and ended by a NUL.
    const { stdout, status } = sh(texts.map((t) => `printf '%s\\0' ${shellQuote(t)}`).join("\n"));
    expect(status).toBe(0);
    expect(stdout.split("\0").slice(0, -1)).toEqual(texts);
  }, 30_000);
});

describe("fromDirectory", () => {
  it("runs a command of several lines from the folder, whatever its name", () => {
    const folders = fc.sample(folderName, { numRuns: 400, seed: 11 }).map((name, i) => join(base, `${i}`, name));
    for (const folder of folders) mkdirSync(folder, { recursive: true });
    // Each in a subshell started elsewhere, as the daemon starts each command from its own folder.
    const script = folders.map((f) => `(cd / && ${fromDirectory(f, "pwd\nprintf 'second line\\n'; pwd")}); printf '\\0'`).join("\n");
    const { stdout, status } = sh(script, tmpdir());
    expect(status).toBe(0);
    expect(stdout.split("\0").slice(0, -1)).toEqual(folders.map((f) => `${f}\nsecond line\n${f}\n`));
  }, 30_000);

  it("runs nothing when the folder is not there: exit status 1", () => {
    const marker = join(base, "ran");
    const { status, stderr } = sh(fromDirectory(join(base, "gone 'away'"), `touch ${shellQuote(marker)}\ntouch ${shellQuote(marker)}`));
    expect(status).toBe(1);
    expect(stderr).not.toBe("");
    expect(spawnSync("test", ["-e", marker]).status).toBe(1);
    expect(execFileSync("/bin/sh", ["-c", "echo ok"]).toString()).toBe("ok\n");
  });
});
