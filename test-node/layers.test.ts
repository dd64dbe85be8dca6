/**
 * The direction of src/'s folders (docs/ARCHITECTURE.md "Layers"): where one folder imports values from another, the
 * other imports none from it. Type-only imports are free, since they leave nothing in the bundle. Each import of a value is read from the source
 * text, so a move that turns a direction around fails here before it is read anywhere else.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");

/** Two pairs still import values from each other; written down here so that no other pair joins them unnoticed. */
const KNOWN_TWO_WAY = ["domain<->protocol", "http<->protocol"];

const walk = (dir: string, out: string[] = []): string[] => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.tsx?$/.test(name)) out.push(p);
  }
  return out;
};
const folderOf = (file: string) => relative(SRC, file).split("/")[0]!.replace(/\.ts$/, "");

/** Every import of a value from another folder of src/: [importing file, imported file]. */
function valueImports(): [string, string][] {
  const out: [string, string][] = [];
  for (const file of walk(SRC)) {
    for (const m of readFileSync(file, "utf8").matchAll(/^import\s+(type\s+)?([^;]*?)\s+from\s+"(\.[^"]+)"/gms)) {
      if (m[1]) continue;
      const names = m[2]!.trim();
      const onlyTypes = /^\{[^}]*\}$/.test(names) && names.slice(1, -1).split(",").map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith("type "));
      if (onlyTypes) continue;
      const target = resolve(dirname(file), m[3]!);
      if (folderOf(file) !== folderOf(target)) out.push([relative(SRC, file), relative(SRC, target) + ".ts"]);
    }
  }
  return out;
}

describe("src/'s layers", () => {
  const imports = valueImports();

  it("has no two folders importing values from each other, but the pairs written down", () => {
    const edges = new Set(imports.map(([f, t]) => `${folderOf(join(SRC, f))}->${folderOf(join(SRC, t))}`));
    const twoWay = [...edges]
      .map((e) => e.split("->") as [string, string])
      .filter(([a, b]) => a < b && edges.has(`${b}->${a}`))
      .map(([a, b]) => `${a}<->${b}`);
    expect(twoWay.sort()).toEqual(KNOWN_TWO_WAY);
  });

  it("keeps the named directions one way: db, protocol and http reach nothing above them, a link reaches a room only by RPC", () => {
    const from = (a: string, b: string) => imports.filter(([f, t]) => f.startsWith(`${a}/`) && t.startsWith(`${b}/`));
    expect(from("db", "views")).toEqual([]);
    expect(from("protocol", "db")).toEqual([]);
    expect(from("protocol", "views")).toEqual([]);
    expect(from("http", "auth")).toEqual([]);
    expect(from("http", "middleware")).toEqual([]);
    expect(from("server-link", "room")).toEqual([]);
  });
});
