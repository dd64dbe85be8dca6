/**
 * What every page is checked for: axe-core's serious and critical violations, and no sideways scroll. Pages are waited
 * for generically (no loading state left, no request in flight), so the audit holds whatever each page becomes.
 */
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** The impacts that fail a page. */
const FAILING = new Set(["serious", "critical"]);

/** Each page's requests in flight (websockets are not requests, so a live page still goes quiet). */
const inFlight = new WeakMap<Page, Set<unknown>>();

function requestsOf(page: Page): Set<unknown> {
  let requests = inFlight.get(page);
  if (!requests) {
    const set = new Set<unknown>();
    page.on("request", (r) => set.add(r));
    page.on("requestfinished", (r) => set.delete(r));
    page.on("requestfailed", (r) => set.delete(r));
    inFlight.set(page, (requests = set));
  }
  return requests;
}

/** Waits until the page shows no loading state and has had no request in flight for a moment; false if it never did within `ms`. */
export async function settle(page: Page, ms = 5_000): Promise<boolean> {
  const requests = requestsOf(page);
  const start = Date.now();
  let quietSince = 0;
  while (Date.now() - start < ms) {
    const loading = await page.evaluate(() => {
      const app = document.getElementById("app");
      const busy = [...document.querySelectorAll<HTMLElement>(".state-loading, .loading, [aria-busy=true]")].some((e) => e.offsetParent !== null);
      return !app?.firstElementChild || busy;
    });
    if (loading || requests.size > 0) quietSince = 0;
    else if (!quietSince) quietSince = Date.now();
    else if (Date.now() - quietSince >= 300) return true;
    await page.waitForTimeout(50);
  }
  return false;
}

/** Opens a path of the hub and waits for the page to settle (false if it did not). */
export async function open(page: Page, url: string): Promise<boolean> {
  requestsOf(page);
  await page.goto(url);
  return settle(page);
}

export interface Violation {
  rule: string;
  impact: string;
  help: string;
  targets: string[];
  why: string;
}

/** The rules whose outcome depends on the colours alone: all that changes between a page's light and dark. */
export const COLOUR_RULES = ["color-contrast", "link-in-text-block"];

/**
 * axe-core's serious and critical violations on the page as it is now (injected by evaluation, so the page's CSP holds):
 * every rule, or only these.
 */
export async function axeViolations(page: Page, only?: string[]): Promise<Violation[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
  const found = await page.evaluate(async (only) => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: any[] }> } }).axe;
    const { violations } = await axe.run(document, { resultTypes: ["violations"], ...(only ? { runOnly: { type: "rule", values: only } } : {}) });
    return violations.map((v) => ({
      rule: v.id as string,
      impact: v.impact as string,
      help: v.help as string,
      targets: (v.nodes as { target: string[]; failureSummary?: string }[]).map((n) => n.target.join(" ")),
      // The first node's reason (for contrast, the colours and ratio found).
      why: ((v.nodes[0]?.failureSummary as string | undefined) ?? "").replace(/\s+/g, " ").slice(0, 240),
    }));
  }, only);
  return found.filter((v) => FAILING.has(v.impact));
}

/** How much wider than the window the page is (0 when it does not scroll sideways). */
export const sidewaysOverflow = (page: Page) => page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth));

/** One line per violation, naming the page, its size and theme, the rule and where. */
export const describeViolations = (where: string, violations: Violation[]) =>
  violations.map(
    (v) =>
      `${where}: ${v.rule} (${v.impact}) ${v.help} at ${v.targets.slice(0, 5).join(", ")}${v.targets.length > 5 ? ` and ${v.targets.length - 5} more` : ""} (${v.why})`,
  );
