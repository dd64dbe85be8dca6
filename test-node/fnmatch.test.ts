/**
 * src/domain/fnmatch.ts against the real thing: random patterns and names, each decided by python3's
 * `fnmatch.fnmatchcase` (the function the daemon's hook applies on POSIX) in one batch over stdin, and by ours.
 */
import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fnmatch } from "../src/domain/fnmatch";

const PYTHON = `
import fnmatch, json, sys
cases = json.load(sys.stdin)
json.dump([fnmatch.fnmatchcase(name, pattern) for name, pattern in cases], sys.stdout)
`;

/** Python's answers for every [name, pattern], from one python3 process. */
const pythonDecides = (cases: [string, string][]): boolean[] =>
  JSON.parse(execFileSync("python3", ["-c", PYTHON], { input: JSON.stringify(cases) }).toString());

/** Few characters, so classes, ranges (reversed too), negations and unclosed brackets come up often, and names hit them. */
const patternChar = fc.constantFrom("a", "b", "c", "z", "-", "!", "[", "]", "*", "?", "\\", "^", "&", "é", "😀", "\n");
const nameChar = fc.constantFrom("a", "b", "c", "z", "-", "!", "[", "]", "\\", "^", "&", "é", "😀", "\n", "x");
const text = (char: fc.Arbitrary<string>, maxLength: number) => fc.array(char, { maxLength }).map((cs) => cs.join(""));

describe("fnmatch", () => {
  it("decides as python's fnmatch.fnmatchcase over random patterns and names", () => {
    const cases = fc.sample(fc.tuple(text(nameChar, 8), text(patternChar, 8)), { numRuns: 20_000, seed: 31 });
    // Names built from the pattern itself, so that matches are common and not only failures.
    const derived = cases.map(([, pattern]): [string, string] => [
      pattern
        .replaceAll("*", "ab")
        .replaceAll("?", "c")
        .replace(/[[\]!]/g, ""),
      pattern,
    ]);
    const all = [...cases, ...derived];
    const expected = pythonDecides(all);
    const mismatches = all.filter(([name, pattern], i) => fnmatch(name, pattern) !== expected[i]).slice(0, 5);
    expect(mismatches).toEqual([]);
    expect(expected.filter(Boolean).length).toBeGreaterThan(all.length / 20);
  });

  it("decides ranges at their edges as python does: equal ends, reversed ends, a dash first or last, empty sets", () => {
    const patterns = ["[a-a]", "[b-a]", "[!b-a]", "[a-b-c]", "[-a]", "[a-]", "[!-]", "[]a]", "[!]a]", "[]", "[!]", "[a-a-]", "[z-a]x", "[\\-a]"];
    const names = ["a", "b", "c", "-", "]", "x", "zx", "\\", ""];
    const cases = patterns.flatMap((p) => names.map((n): [string, string] => [n, p]));
    expect(cases.map(([n, p]) => fnmatch(n, p))).toEqual(pythonDecides(cases));
  });

  it("matches the rules people write", () => {
    const cases: [string, string][] = [
      ["npm test", "npm test*"],
      ["npm test -- --watch", "npm test*"],
      ["npm install", "npm test*"],
      ["WebFetch", "Web*"],
      ["run_shell_command", "run_[a-z]*"],
      ["Bash", "[!B]ash"],
      ["[Bash", "[Bash"],
      ["rm -rf /", "rm -rf *"],
    ];
    expect(cases.map(([n, p]) => fnmatch(n, p))).toEqual(pythonDecides(cases));
    expect(cases.map(([n, p]) => fnmatch(n, p))).toEqual([true, true, false, true, true, false, true, true]);
  });
});
