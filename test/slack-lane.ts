/**
 * A Slack channel's lane as test/slack-channel.test.ts drives it: a workspace installed and a project's channel written
 * to D1 as the admin's routes write them, tasks and questions through the API, and what the fake Web API was called with.
 */
import { env } from "cloudflare:test";
import { seal } from "../src/auth/sealed";
import { addMember, bootstrapAdmin, call, createProject, registerAgent, until as waitUntil } from "./helpers";
import { slackCalls } from "./slack";
import type { SlackCall } from "./slack-api-setup";
import { cli, expectOk, openSession, T, worldUnder, type World } from "./task-world";

export const until = <V>(read: () => Promise<V>, done: (value: V) => boolean, what: string, timeoutMs = 10_000) => waitUntil(read, done, what, timeoutMs);

export const unique = () => crypto.randomUUID().replace(/-/g, "").slice(0, 10).toUpperCase();

/** A workspace with the app installed, its token sealed as the install flow seals it. */
export async function install(token?: (team: string) => string) {
  const team = `T${unique()}`;
  const now = new Date().toISOString();
  await env.DB.prepare(
    "INSERT INTO slack_installations (team_id, team_name, bot_token_sealed, bot_user_id, source, installed_by, created_at, updated_at) VALUES (?1, ?2, ?3, 'UBOT', 'token', 'admin', ?4, ?4)",
  )
    .bind(team, `Team ${team}`, await seal(env.DATA_KEY, token ? token(team) : `xoxb-${team}-x`), now)
    .run();
  return team;
}

/** The project posts to a new channel of the workspace, with the events it picked (all by default). */
export async function postTo(w: World, team: string, opts: { events?: string[]; muted?: boolean } = {}) {
  const channel = `C${unique()}`;
  await env.DB.prepare(
    "INSERT INTO slack_channels (id, project_id, team_id, channel_id, events, muted, created_by, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'admin', ?7)",
  )
    .bind(crypto.randomUUID(), w.project.id, team, channel, opts.events ? JSON.stringify(opts.events) : null, opts.muted ? 1 : 0, new Date().toISOString())
    .run();
  return channel;
}

export const callsIn = async (channel: string, method?: string) => (await slackCalls(method)).filter((c) => c.params.channel === channel);
export const posted = (channel: string) => callsIn(channel, "chat.postMessage");
export const buttonsOf = (c: SlackCall) => (c.params.blocks as any[]).find((b) => b.type === "actions")?.elements ?? [];
export const actionIds = (c: SlackCall) => buttonsOf(c).map((b: any) => b.action_id);
export const blockText = (c: SlackCall) =>
  (c.params.blocks as any[]).map((b) => b.text?.text ?? b.elements?.map((e: any) => e.text?.text ?? e.text).join(" ") ?? "").join("\n");

export const postOf = (team: string, channel: string, subject: string) =>
  env.DB.prepare("SELECT ts, thread_ts FROM slack_posts WHERE team_id = ?1 AND channel_id = ?2 AND subject = ?3")
    .bind(team, channel, subject)
    .first<{ ts: string; thread_ts: string | null }>();

/** Waits for a message's post to be recorded (a settling event is owed only where its message was posted). */
export const recorded = (team: string, channel: string, subject: string) =>
  until(
    () => postOf(team, channel, subject),
    (p) => p !== null,
    `the post of ${subject}`,
  ) as Promise<{ ts: string; thread_ts: string | null }>;

export const outboxOf = (team: string, channel: string) =>
  env.DB.prepare("SELECT event_type, status, last_error FROM outbox WHERE target_kind = 'slack' AND target_id = ?1 ORDER BY created_at, seq")
    .bind(`${team}:${channel}`)
    .all<{ event_type: string; status: string; last_error: string | null }>()
    .then((r) => r.results);

export const lane = (team: string, channel: string) => env.SLACK_CHANNEL.get(env.SLACK_CHANNEL.idFromName(`${team}:${channel}`));

export async function runningTask(w: World, title: string) {
  const { json } = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title, project_id: w.project.id }), 201);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/start`, {}));
  return json.id as string;
}

export const ask = async (w: World, taskId: string, question: string, type = "question") =>
  (await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/help`, { question, intervention_type: type }))).json.intervention_id as string;

export const gate = (w: World, on: boolean) =>
  expectOk(call(`/api/v1/projects/${w.project.id}`, { method: "PATCH", token: w.admin, body: { settings: { approve_agent_tasks: on } } }));

let first: World | undefined;

/** A project of its own with its own agents; its member is the file's one person (sign-ins are limited to ten a minute). */
export async function world(): Promise<World> {
  if (!first) return (first = await worldUnder(await bootstrapAdmin(), `Slack ${unique()}`));
  const admin = first.admin;
  const project = await createProject(admin, `Slack ${unique()}`);
  await addMember(admin, project.id, first.member.id);
  const worker = await registerAgent(admin, `worker-${unique()}`);
  const orchestrator = await registerAgent(admin, `orchestrator-${unique()}`);
  const workerSession = await openSession(worker.apiKey, project.id, "worker");
  const orchestratorSession = await openSession(orchestrator.apiKey, project.id, "orchestrator");
  return { admin, member: first.member, project, worker, orchestrator, workerSession, orchestratorSession };
}
