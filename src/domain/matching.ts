/**
 * Capability matching (seed §5): how well a server fits a task's
 * requirements. Hard requirements disqualify (score -1) when missing; soft
 * ones only add. The reasons are the seed's strings, except where the server
 * declares nothing of what is missing: then the reason says so, so a person
 * knows to declare it. A server that declares no capabilities at all takes
 * tasks that require nothing (one at a time), as a daemon does on its first day.
 */
import { isMatchableValue, KNOWN_REQUIREMENT_FIELDS, type Capabilities, type Requirements } from "../protocol/orchestratia-v1";

export interface Candidate {
  id: string;
  name: string;
  /** Its effective capabilities (what the daemon sent joined with what an admin declared); null when neither declared any. */
  capabilities: Capabilities | null;
  /** Repos the daemon registered (`{name: path}` or a list of names), counted with capabilities.repos. */
  repos: unknown;
  os: string | null;
  online: boolean;
  /** Tasks assigned, planning or running on this server. */
  activeTasks: number;
}

export interface Match {
  server_id: string;
  server_name: string;
  score: number;
  status: "online" | "offline";
  reasons: string[];
  active_tasks: number;
}

export const SCORES = { repo: 100, languages: 50, environment: 30, tool: 10, tag: 5, preferred: 200, online: 25, capacity: 50 } as const;
export const DEFAULT_MAX_CONCURRENT_TASKS = 1;

const lower = (xs: readonly string[] | undefined) => (xs ?? []).map((x) => x.toLowerCase());

function repoNames(c: Candidate): string[] {
  const declared = Object.keys(c.capabilities?.repos ?? {});
  const registered = Array.isArray(c.repos) ? c.repos.map(String) : c.repos && typeof c.repos === "object" ? Object.keys(c.repos) : [];
  return [...new Set([...declared, ...registered])];
}

/** How many tasks a server takes at once: what it declared, or the default. */
export const maxConcurrentTasks = (capabilities: Capabilities | null | undefined) => capabilities?.max_concurrent_tasks ?? DEFAULT_MAX_CONCURRENT_TASKS;

const maxTasks = (c: Candidate) => maxConcurrentTasks(c.capabilities);

/** Whether the server can take another task. */
export const hasCapacity = (c: Candidate) => c.activeTasks < maxTasks(c);

/** The roles a server's agent declared (`role` or `roles` in its capabilities); "worker" when it declared none. */
export function rolesOf(capabilities: Capabilities | null | undefined): string[] {
  const declared = [...(capabilities?.role ? [capabilities.role] : []), ...(capabilities?.roles ?? [])];
  return declared.length ? [...new Set(declared)] : ["worker"];
}

/** What a server offers for `requirements.capabilities`: its languages, tools, tags and environments. */
export const capabilityNames = (caps: Capabilities) => [
  ...new Set([...(caps.languages ?? []), ...(caps.tools ?? []), ...(caps.tags ?? []), ...(caps.environments ?? [])]),
];

const same = (a: unknown, b: unknown) => (typeof a === "string" && typeof b === "string" ? a.toLowerCase() === b.toLowerCase() : a === b);
const shown = (v: unknown) => (Array.isArray(v) ? v.map(String).join(", ") : String(v));

/**
 * A requirement field the hub does not know, against the server's capability
 * of the same name: a number is a minimum, a boolean or string must be equal
 * (or among a listed capability), a list must be contained entirely. Null
 * when it holds; otherwise why not.
 */
export function unmetCustomRequirement(field: string, wanted: unknown, caps: Capabilities): string | null {
  if (!isMatchableValue(wanted)) return `cannot match ${field}`;
  const has = (caps as Record<string, unknown>)[field];
  if (has === undefined || has === null) return `missing ${field}: ${shown(wanted)}`;
  if (typeof wanted === "number") {
    if (typeof has !== "number") return `missing ${field}: ${wanted}`;
    return has >= wanted ? null : `insufficient ${field}: ${has} < ${wanted}`;
  }
  const offered = Array.isArray(has) ? has : [has];
  const missing = (Array.isArray(wanted) ? wanted : [wanted]).filter((w) => !offered.some((o) => same(o, w)));
  return missing.length ? `missing ${field}: ${shown(missing)}` : null;
}

const customFields = (req: Requirements) => Object.entries(req).filter(([field]) => !(KNOWN_REQUIREMENT_FIELDS as readonly string[]).includes(field));

export function scoreServer(req: Requirements, c: Candidate): Match {
  const base = { server_id: c.id, server_name: c.name, status: c.online ? ("online" as const) : ("offline" as const), active_tasks: c.activeTasks };
  const disqualified = (reason: string): Match => ({ ...base, score: -1, reasons: [`${reason} (disqualified)`] });
  const caps: Capabilities = c.capabilities ?? {};
  /** The seed's reason, or, when the server declares none of `what`, that it declares none and what the task needs. */
  const lacking = (what: string, declared: readonly unknown[], seed: string, needed: readonly string[]) =>
    disqualified(declared.length ? seed : `declares no ${what}; the task needs ${needed.join(", ")}`);

  const reasons: string[] = [];
  let score = 0;
  const repo = req.repo ? caps.repos?.[req.repo] : undefined;

  if (req.repo) {
    const repos = repoNames(c);
    if (!repos.includes(req.repo)) return lacking("repos", repos, `missing repo: ${req.repo}`, [req.repo]);
    score += SCORES.repo;
    reasons.push(`repo match: ${req.repo} (+${SCORES.repo})`);
  }
  if (req.languages?.length) {
    const known = new Set([...lower(caps.languages), ...lower(repo?.languages)]);
    const missing = req.languages.filter((l) => !known.has(l.toLowerCase()));
    if (missing.length) return lacking("languages", [...known], `missing languages: ${missing.join(", ")}`, missing);
    score += SCORES.languages;
    reasons.push(`language match: ${req.languages.join(", ")} (+${SCORES.languages})`);
  }
  if (req.environments?.length) {
    const known = new Set([...lower(caps.environments), ...(c.os ? [c.os.toLowerCase() === "darwin" ? "macos" : c.os.toLowerCase()] : [])]);
    const matched = req.environments.filter((e) => known.has(e.toLowerCase()));
    if (matched.length === 0) return lacking("environments", [...known], `missing environment: ${req.environments.join(", ")}`, req.environments);
    score += SCORES.environment;
    reasons.push(`environment match: ${matched.join(", ")} (+${SCORES.environment})`);
  }

  if (req.role && !rolesOf(caps).some((r) => same(r, req.role))) return disqualified(`missing role: ${req.role}`);
  if (req.capabilities?.length) {
    const offered = new Set(lower(capabilityNames(caps)));
    const missing = req.capabilities.filter((x) => !offered.has(x.toLowerCase()));
    if (missing.length)
      return lacking("capabilities (languages, tools, tags, environments)", [...offered], `missing capabilities: ${missing.join(", ")}`, missing);
  }
  for (const [field, wanted] of customFields(req)) {
    const unmet = unmetCustomRequirement(field, wanted, caps);
    if (unmet) return disqualified(unmet);
  }

  if (!hasCapacity(c)) return disqualified(`at capacity: ${c.activeTasks}/${maxTasks(c)} tasks`);

  const tools = new Set([...lower(caps.tools), ...lower(repo?.tools)]);
  const matchedTools = (req.tools ?? []).filter((t) => tools.has(t.toLowerCase()));
  if (matchedTools.length) {
    score += SCORES.tool * matchedTools.length;
    reasons.push(`tools match: ${matchedTools.join(", ")} (+${SCORES.tool * matchedTools.length})`);
  }
  const tags = new Set(lower(caps.tags));
  const matchedTags = (req.tags ?? []).filter((t) => tags.has(t.toLowerCase()));
  if (matchedTags.length) {
    score += SCORES.tag * matchedTags.length;
    reasons.push(`tags match: ${matchedTags.join(", ")} (+${SCORES.tag * matchedTags.length})`);
  }
  if (req.prefer_server && req.prefer_server === c.name) {
    score += SCORES.preferred;
    reasons.push(`preferred server (+${SCORES.preferred})`);
  }
  if (c.online) {
    score += SCORES.online;
    reasons.push(`online (+${SCORES.online})`);
  }
  score += SCORES.capacity;
  reasons.push(`has capacity (+${SCORES.capacity})`);
  return { ...base, score, reasons };
}

/** What a server that rejected the task scores for it: never offered it again. */
export const REJECTED_REASON = "rejected this task (disqualified)";

/** Best first: score, then fewer active tasks, then name; disqualified servers (and those in `rejectedBy`) last. */
export function rankServers(req: Requirements, candidates: readonly Candidate[], rejectedBy: readonly string[] = []): Match[] {
  return candidates
    .map((c) => {
      const match = scoreServer(req, c);
      return rejectedBy.includes(c.id) ? { ...match, score: -1, reasons: [REJECTED_REASON] } : match;
    })
    .sort((a, b) => b.score - a.score || a.active_tasks - b.active_tasks || a.server_name.localeCompare(b.server_name));
}

export const bestMatch = (req: Requirements, candidates: readonly Candidate[], rejectedBy: readonly string[] = []): Match | null => {
  const [best] = rankServers(req, candidates, rejectedBy);
  return best && best.score >= 0 ? best : null;
};
