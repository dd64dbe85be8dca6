/** The command palette's ranking: what matches a query, and in what order. */
import { describe, expect, it } from "vitest";
import type { PaletteItem } from "../web/src/palette-items";
import { rank, scoreOf } from "../web/src/palette-rank";

const page = (label: string): PaletteItem => ({ key: `page:${label}`, kind: "page", label, path: `/${label}` });
const task = (label: string, id: string): PaletteItem => ({ key: `task:${id}`, kind: "task", label, path: `/t/${id}`, id });

const ITEMS = [
  page("Code health"),
  page("Usage"),
  task("Health check for the usage export", "4f1c9a2e-0000-4000-8000-000000000001"),
  task("Fix the healthcheck", "9b2d0c11-0000-4000-8000-000000000002"),
  page("Account settings"),
];
const labels = (query: string) => rank(ITEMS, query).map((i) => i.label);

describe("rank", () => {
  it("puts a label starting with the query first, then labels with a word starting with it (pages before tasks)", () => {
    expect(labels("health")).toEqual(["Health check for the usage export", "Code health", "Fix the healthcheck"]);
  });

  it("puts a word starting with the query before the query inside a word", () => {
    expect(labels("check")).toEqual(["Health check for the usage export", "Fix the healthcheck"]);
  });

  it("needs every word typed, in any order", () => {
    expect(labels("usage health")).toEqual(["Health check for the usage export"]);
    expect(labels("usage nothing")).toEqual([]);
  });

  it("finds a task by the start of its id, from 4 characters, and not by the middle of it", () => {
    expect(labels("9b2d0c")).toEqual(["Fix the healthcheck"]);
    expect(labels("9b2")).toEqual([]);
    expect(labels("0c11")).toEqual([]);
  });

  it("ignores case and the spaces around the query, and gives everything in order to an empty query", () => {
    expect(labels("  USAGE ")[0]).toBe("Usage");
    expect(labels("")).toEqual(ITEMS.map((i) => i.label));
    expect(rank(ITEMS, "", 2)).toHaveLength(2);
  });

  it("scores the query found whole above its words found apart", () => {
    const together = scoreOf(page("Code health"), "code health")!;
    const apart = scoreOf(page("Health of code"), "code health")!;
    expect(together).toBeGreaterThan(apart);
  });
});
