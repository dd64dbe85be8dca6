/**
 * Usage items → the usage points of each project's room. An item belongs to the hub session its export names
 * (`orchestratia.session_id`) or, failing that, to the one its agent's own session id was first seen beside (a link
 * written here the first time both arrive together). The credential must speak for that session: a server's key for
 * its own sessions only, a person's token for sessions of projects they may change. An item with no such session is
 * rejected (the answer's partial success counts it); nothing of it is kept. Lookups are remembered by the isolate for a
 * short while, so a busy exporter costs D1 a read now and then rather than one per export.
 */
import { accessOf } from "../auth/access";
import type { Principal } from "../auth/principal";
import { sha256Hex } from "../auth/secrets";
import { linkAgentSessions, linkedSessions, membershipsIn, sessionsByIds, type AttributedSession } from "../db/usage-attribution";
import { USAGE_MEASURES, type UsagePoint } from "../domain/usage";
import type { UsageItem } from "./usage-items";
import { d1Of, onEveryShard } from "../db/shards";
import type { Env } from "../runtime/env";

/** How long a found session or link is remembered (neither changes while it exists). */
const FOUND_TTL_MS = 60_000;
/** How long an id that named nothing is remembered: a session opened since is found soon after. */
const MISSING_TTL_MS = 5_000;
const MAX_REMEMBERED = 5_000;

/** Answers this isolate read recently: a found one for FOUND_TTL_MS, an absent one (null) for MISSING_TTL_MS. */
class Recent<T> {
  private readonly entries = new Map<string, { at: number; value: T | null }>();

  constructor(private readonly now: () => number = Date.now) {}

  get(key: string): T | null | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    return this.now() - e.at < (e.value === null ? MISSING_TTL_MS : FOUND_TTL_MS) ? e.value : undefined;
  }

  set(key: string, value: T | null) {
    this.entries.delete(key);
    while (this.entries.size >= MAX_REMEMBERED) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { at: this.now(), value });
  }

  /** The answers for `keys`: remembered ones, and the rest read together by `read` (absent keys remembered as null). */
  async many(keys: readonly string[], read: (missing: string[]) => Promise<Map<string, T>>): Promise<Map<string, T>> {
    const out = new Map<string, T>();
    const missing: string[] = [];
    for (const key of new Set(keys)) {
      const known = this.get(key);
      if (known === undefined) missing.push(key);
      else if (known !== null) out.set(key, known);
    }
    if (missing.length === 0) return out;
    const found = await read(missing);
    for (const key of missing) {
      const value = found.get(key) ?? null;
      this.set(key, value);
      if (value !== null) out.set(key, value);
    }
    return out;
  }
}

/** A session, with the shard its rows (and its links) live on. */
type ShardSession = AttributedSession & { shard: string };

const sessionsSeen = new Recent<ShardSession>();
const linksSeen = new Recent<string>();

export interface Attributed {
  /** The points for each project's room. */
  byProject: Map<string, UsagePoint[]>;
  /** Items no session could be found (or allowed) for. */
  rejected: number;
  reason: string | null;
}

const NO_SESSION = "no hub session: set OTEL_RESOURCE_ATTRIBUTES=orchestratia.session_id=<the session's id> in the agent's environment";
const NOT_YOURS = "the hub session named is unknown or the credential may not report for it";

/** Whether the caller may report usage for the session. */
async function allowedSessions(d1: D1Database, principal: Principal, sessions: AttributedSession[]): Promise<Set<string>> {
  if (principal.kind === "server") return new Set(sessions.filter((s) => s.server_id === principal.server.id).map((s) => s.id));
  const roles = principal.user.role === "admin" ? new Map() : await membershipsIn(d1, principal.user.id, [...new Set(sessions.map((s) => s.project_id))]);
  return new Set(sessions.filter((s) => accessOf(principal, s.project_id, roles.get(s.project_id) ?? null) === "write").map((s) => s.id));
}

/** The ids an item names its session by. */
export interface SessionIds {
  hubSessionId: string | null;
  agentSessionId: string | null;
}

/** An item's session, or why it has none the caller may report for. */
export type SessionOf = (item: SessionIds) => { session: AttributedSession } | { reason: string };

/**
 * The hub session of each of the items, as one lookup for them all: the one they name, or the one their agent's own
 * session id is linked to, and only a session the caller may report for.
 */
export async function sessionsOf(env: Env, principal: Principal, items: readonly SessionIds[], now: string): Promise<SessionOf> {
  const agentIds = items.flatMap((i) => (i.agentSessionId ? [i.agentSessionId] : []));
  // A session and its links live on its project's shard: every shard is asked at once.
  const links = await linksSeen.many(
    agentIds,
    async (ids) => new Map((await onEveryShard(env, (d1) => linkedSessions(d1, ids))).flat().map((l) => [l.agent_session_id, l.session_id])),
  );
  const sessionIdOf = (i: SessionIds) => i.hubSessionId ?? (i.agentSessionId ? links.get(i.agentSessionId) : undefined) ?? null;
  const sessions = await sessionsSeen.many(
    items.flatMap((i) => sessionIdOf(i) ?? []),
    async (ids) => {
      const found = await onEveryShard(env, async (d1, shard) => (await sessionsByIds(d1, ids)).map((s) => ({ ...s, shard })));
      return new Map(found.flat().map((s) => [s.id, s]));
    },
  );
  // Memberships are the directory's.
  const allowed = await allowedSessions(env.DB, principal, [...sessions.values()]);

  // The first time an agent's session id arrives beside a hub session the caller may speak for, it is remembered.
  const newLinks = new Map<string, string>();
  for (const i of items)
    if (i.hubSessionId && i.agentSessionId && allowed.has(i.hubSessionId) && !links.has(i.agentSessionId)) newLinks.set(i.agentSessionId, i.hubSessionId);
  // Each link is written on its session's shard; another export may have linked one of them first: D1's answer is what is remembered.
  const byShard = new Map<string, { agentSessionId: string; sessionId: string }[]>();
  for (const [agentSessionId, sessionId] of newLinks) {
    const shard = sessions.get(sessionId)!.shard;
    byShard.set(shard, [...(byShard.get(shard) ?? []), { agentSessionId, sessionId }]);
  }
  const stored = await Promise.all([...byShard].map(([shard, pairs]) => linkAgentSessions(d1Of(env, shard), pairs, now)));
  for (const l of stored.flat()) linksSeen.set(l.agent_session_id, l.session_id);

  return (item) => {
    const id = sessionIdOf(item);
    const session = id ? sessions.get(id) : undefined;
    return session && allowed.has(session.id) ? { session } : { reason: id ? NOT_YOURS : NO_SESSION };
  };
}

export async function attribute(env: Env, principal: Principal, items: readonly UsageItem[], now: string): Promise<Attributed> {
  const out: Attributed = { byProject: new Map(), rejected: 0, reason: null };
  if (items.length === 0) return out;
  const sessionOf = await sessionsOf(env, principal, items, now);
  for (const item of items) {
    const found = sessionOf(item);
    if ("reason" in found) {
      out.rejected++;
      out.reason ??= found.reason;
      continue;
    }
    const { session } = found;
    const who = { sessionId: session.id, serverId: session.server_id, agentType: session.agent_type ?? item.agentType, model: item.model, at: item.at };
    const cumulative = item.cumulative && { series: await sha256Hex(item.cumulative.series), startedAt: item.cumulative.startedAt };
    const points = out.byProject.get(session.project_id) ?? [];
    for (const measure of USAGE_MEASURES) {
      const value = item.amounts[measure];
      if (value === undefined || (!cumulative && value <= 0)) continue;
      points.push({ ...who, measure, value, ...(cumulative && { cumulative }) });
    }
    out.byProject.set(session.project_id, points);
  }
  return out;
}
