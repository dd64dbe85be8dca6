/**
 * The hub's log: one JSON line per thing worth knowing, which Workers Logs
 * indexes field by field. Lines share a shape so they can be queried together:
 * `msg`, and where they apply `request_id`, `project_id`, `task_id`,
 * `operation`. Never a body, a header, a query string or a secret.
 *
 * `LOG_LEVEL` (debug, info, warn, error; default info) drops the lines below
 * it before anything is built, so a line that is not written costs a compare.
 */
import { env } from "cloudflare:workers";
import type { Env } from "./env";

export type LogLevel = "debug" | "info" | "warn" | "error";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const DEFAULT_RANK = RANK.info;

/** The console method Workers Logs reads each level from. */
const WRITE: Record<LogLevel, (line: string) => void> = {
  debug: (line) => console.debug(line),
  info: (line) => console.log(line),
  warn: (line) => console.warn(line),
  error: (line) => console.error(line),
};

/** What a line may carry besides its level and message; the usual fields first. */
export interface LogFields {
  request_id?: string;
  project_id?: string;
  task_id?: string;
  operation?: string;
  [field: string]: unknown;
}

let seenLevel: string | undefined;
let threshold = DEFAULT_RANK;

/** The level in force: read from the environment each time (cheap), parsed only when it changes. */
function currentThreshold(): number {
  const raw = (env as Partial<Env>).LOG_LEVEL;
  if (raw !== seenLevel) {
    seenLevel = raw;
    threshold = RANK[raw?.trim().toLowerCase() as LogLevel] ?? DEFAULT_RANK;
  }
  return threshold;
}

/** Whether lines of this level are written now: check before building anything costly for one. */
export const logs = (level: LogLevel) => RANK[level] >= currentThreshold();

/** Writes one line (one JSON.stringify), if its level is on. */
export function log(level: LogLevel, msg: string, fields: LogFields) {
  if (!logs(level)) return;
  WRITE[level](JSON.stringify({ level, msg, ...fields }));
}

const described = (err: unknown) => (err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : { message: String(err) });

/**
 * A failure, with what identifies it (the request id a client was given, the
 * project, the operation) so that the line a user quotes can be found.
 */
export function logError(msg: string, fields: LogFields, err: unknown) {
  if (!logs("error")) return;
  console.error(JSON.stringify({ level: "error", msg, ...fields, error: described(err) }));
}

/** What is worth a line when looking into a problem, and nothing more (debug level). */
export const logDebug = (msg: string, fields: LogFields) => log("debug", msg, fields);
