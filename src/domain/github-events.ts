/**
 * GitHub repository events a trigger answers (API.md "Templates, schedules and triggers"): which deliveries fire it,
 * and the template parameters read from the event.
 */
export const GITHUB_EVENTS = ["issues.labeled", "issue_comment.created", "pull_request.opened"] as const;
export type GithubEvent = (typeof GITHUB_EVENTS)[number];

export interface GithubTriggerRule {
  /** `<X-GitHub-Event>.<action>` names it fires on. */
  events: GithubEvent[];
  /** For issues.labeled: only this label fires it. */
  label?: string | null;
  /** For issue_comment.created: only a comment starting with this command (e.g. "/agent") fires it. */
  command?: string | null;
  /** Per template parameter, a dotted path into the event's payload (`{"title": "issue.title"}`). */
  mapping?: Record<string, string>;
}

/** What a delivery does: fire with these parameters, or nothing, with why (answered 202, not an error). */
export type GithubDecision = { fire: true; event: GithubEvent; parameters: Record<string, unknown> } | { fire: false; ignored: string };

/** The parameters an event gives when the mapping does not name them otherwise. */
export const DEFAULT_GITHUB_PARAMETERS = ["title", "body", "url", "number", "branch", "author", "label", "args", "repo"] as const;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

/** The value at a dotted path (`issue.user.login`, `issue.labels.0.name`), or undefined. */
export function valueAt(source: unknown, path: string): unknown {
  let at: unknown = source;
  for (const part of path.split(".")) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Json)[part];
  }
  return at;
}

/** The text after `command` when `body` starts with it as a word of its own (`/agent fix it` → "fix it"), else null. */
export function commandArgs(body: unknown, command: string): string | null {
  if (typeof body !== "string") return null;
  const text = body.trimStart();
  if (!text.startsWith(command)) return null;
  const rest = text.slice(command.length);
  if (rest !== "" && !/^\s/.test(rest)) return null;
  return rest.trim();
}

/** The defaults an event gives: title, body, url, number, branch, author from its issue, pull request or comment. */
function defaultsOf(event: GithubEvent, payload: Json, args: string | null): Record<(typeof DEFAULT_GITHUB_PARAMETERS)[number], unknown> {
  const repo = obj(payload.repository).full_name;
  if (event === "pull_request.opened") {
    const pr = obj(payload.pull_request);
    const head = obj(pr.head);
    return { title: pr.title, body: pr.body, url: pr.html_url, number: pr.number, branch: head.ref, author: obj(pr.user).login, label: undefined, args, repo };
  }
  const issue = obj(payload.issue);
  if (event === "issue_comment.created") {
    const comment = obj(payload.comment);
    // A comment on a pull request names no branch in its payload: the template's default stands.
    return {
      title: issue.title,
      body: comment.body,
      url: comment.html_url,
      number: issue.number,
      branch: undefined,
      author: obj(comment.user).login,
      label: undefined,
      args,
      repo,
    };
  }
  return {
    title: issue.title,
    body: issue.body,
    url: issue.html_url,
    number: issue.number,
    branch: undefined,
    author: obj(issue.user).login,
    label: obj(payload.label).name,
    args,
    repo,
  };
}

/** `value` as the declared type where it reads as one (a number's text as a number, a number as text); else as it is. */
function asType(value: unknown, type: string | undefined): unknown {
  if (type === "string" && (typeof value === "number" || typeof value === "boolean")) return String(value);
  if (type === "number" && typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  if (type === "boolean" && (value === "true" || value === "false")) return value === "true";
  return value;
}

/**
 * Whether a delivery of `eventName` (X-GitHub-Event) fires the rule, and with which parameters: each the template
 * declares, from the rule's mapping (a dotted path into the payload; `command.args` is the text after the command), else
 * from the event's defaults. Values are read as the declared type where they can be; absent or null ones are left out,
 * so the template's default stands.
 */
export function githubFiring(
  rule: GithubTriggerRule,
  eventName: string,
  payload: unknown,
  declared: readonly { name: string; type: string }[],
): GithubDecision {
  const body = obj(payload);
  const event = `${eventName}.${typeof body.action === "string" ? body.action : ""}` as GithubEvent;
  if (!rule.events.includes(event)) return { fire: false, ignored: `the trigger does not take ${event} (it takes ${rule.events.join(", ")})` };
  if (event === "issues.labeled" && rule.label && obj(body.label).name !== rule.label)
    return { fire: false, ignored: `the label added is not "${rule.label}"` };
  let args: string | null = null;
  if (event === "issue_comment.created" && rule.command) {
    args = commandArgs(obj(body.comment).body, rule.command);
    if (args === null) return { fire: false, ignored: `the comment does not start with ${rule.command}` };
  }
  const defaults: Record<string, unknown> = defaultsOf(event, body, args);
  const source = { ...body, command: { args } };
  const parameters: Record<string, unknown> = {};
  for (const p of declared) {
    const path = rule.mapping?.[p.name];
    const value = path !== undefined ? valueAt(source, path) : defaults[p.name];
    if (value !== undefined && value !== null) parameters[p.name] = asType(value, p.type);
  }
  return { fire: true, event, parameters };
}
