/**
 * A project's usage for a period, as its Usage page shows it: the totals and the rows per day, model, agent and task,
 * read together, and read again (at most about once a second) while usage batches arrive on the project's feed.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { hub, messageOf, ok } from "./api";
import type { HubEvent, UsageRow } from "./types";
import { lastDays, type Usage } from "./usage-format";
import { BUDGET_EVENTS, USAGE_RECORDED } from "./usage-live";

export interface UsageReport {
  from: string;
  to: string;
  totals: Usage;
  days: UsageRow[];
  models: UsageRow[];
  agents: UsageRow[];
  tasks: UsageRow[];
}

/** Reads close together while usage streams in are one read a second, not one per batch. */
const REREAD_EVERY_MS = 1000;

/** The events after which what the page shows is read again. */
export const USAGE_EVENTS: ReadonlySet<string> = new Set([USAGE_RECORDED, ...BUDGET_EVENTS]);

export async function readUsage(projectId: string, from: string, to: string): Promise<UsageReport> {
  const by = (group_by: "day" | "model" | "agent" | "task") =>
    ok(hub.GET("/api/v1/projects/{id}/usage", { params: { path: { id: projectId }, query: { from, to, group_by } } }));
  const [days, models, agents, tasks] = await Promise.all([by("day"), by("model"), by("agent"), by("task")]);
  return { from: days.from, to: days.to, totals: days.totals, days: days.rows, models: models.rows, agents: agents.rows, tasks: tasks.rows };
}

/**
 * Calls `read` now, whenever `key` changes, and after `latest` changes (a batch of the feed's events), no more than
 * once in REREAD_EVERY_MS; only the newest read lands.
 */
export function useLiveRead<T>(read: () => Promise<T>, key: unknown[], latest: HubEvent[]) {
  const [value, setValue] = useState<T | null>(null);
  /** What the newest read failed with (null once one lands). */
  const [failure, setFailure] = useState<unknown>(null);
  const reads = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const run = () => {
    timer.current = undefined;
    const n = ++reads.current;
    void read().then(
      (v) => {
        if (n !== reads.current) return;
        setValue(v);
        setFailure(null);
      },
      (e) => n === reads.current && setFailure(e ?? new Error("failed")),
    );
  };
  useEffect(() => {
    clearTimeout(timer.current);
    setValue(null);
    setFailure(null);
    run();
    return () => {
      clearTimeout(timer.current);
      timer.current = undefined;
      reads.current++;
    };
  }, key);
  useEffect(() => {
    if (latest.length > 0) timer.current ??= setTimeout(run, REREAD_EVERY_MS);
  }, [latest]);
  return { value, failure, error: failure === null ? null : messageOf(failure), reread: run };
}

/** The periods the page offers, in days; the first visit shows the middle one. */
export const PERIODS = [7, 30, 90] as const;
export type Period = (typeof PERIODS)[number];

export const periodOf = (search: string): Period => {
  const days = Number(new URLSearchParams(search).get("days"));
  return (PERIODS as readonly number[]).includes(days) ? (days as Period) : 30;
};

export const rangeOf = (days: Period) => lastDays(days);
