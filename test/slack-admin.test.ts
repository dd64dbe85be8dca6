/**
 * Slack's setup by an admin and a project's channels, against the fake Web API (test/slack-api-setup.ts): the
 * manifest, installing by a pasted token and by the OAuth flow, and adding, changing and removing channels.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../src/index";
import { addMember, BASE, bootstrapAdmin, call, createProject, createUser, expectProblem, fetchUrl, replyOf } from "./helpers";
import { SLACK_ROOT, slackCalls } from "./slack";

let admin: string;
let member: Awaited<ReturnType<typeof createUser>>;
let viewer: Awaited<ReturnType<typeof createUser>>;
let project: { id: string };
let other: { id: string };

beforeAll(async () => {
  admin = await bootstrapAdmin();
  member = await createUser(admin, "member");
  viewer = await createUser(admin, "viewer");
  project = await createProject(admin, "Slack channels");
  other = await createProject(admin, "Elsewhere");
  await addMember(admin, project.id, member.id);
  await addMember(admin, project.id, viewer.id);
});

const installToken = (team_id: string, bot_token: string, token = admin) => call("/api/v1/slack/installations", { token, body: { team_id, bot_token } });

describe("the manifest", () => {
  it("names the hub's URLs and the scopes it needs, for admins only", async () => {
    const reply = await call("/api/v1/slack/manifest", { token: admin });
    expect(reply.status, reply.text).toBe(200);
    const m = reply.json;
    expect(m.features.slash_commands).toEqual([expect.objectContaining({ command: "/orc", url: "https://hub.test/slack/commands", should_escape: false })]);
    expect(m.oauth_config.redirect_urls).toEqual(["https://hub.test/slack/oauth/callback"]);
    expect(m.oauth_config.scopes.bot).toEqual(expect.arrayContaining(["commands", "chat:write", "channels:read", "groups:read", "channels:join"]));
    expect(m.settings.interactivity).toEqual({ is_enabled: true, request_url: "https://hub.test/slack/interactions" });
    expect(m.settings.event_subscriptions).toEqual({ request_url: "https://hub.test/slack/events", bot_events: ["app_uninstalled", "tokens_revoked"] });
    expect(m.settings).toMatchObject({ org_deploy_enabled: false, socket_mode_enabled: false, token_rotation_enabled: false });
    expectProblem(await call("/api/v1/slack/manifest", { token: member.token }), 403, "FORBIDDEN");
  });
});

describe("installing by a bot token", () => {
  it("checks the token with Slack, keeps it sealed and never answers it", async () => {
    const token = "xoxb-T123-secret-bot-token";
    const reply = await installToken("T123", token);
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toMatchObject({ team_id: "T123", team_name: "Team T123", bot_user_id: "UBOT", source: "token" });
    expect(reply.text).not.toContain(token);
    expect((await slackCalls("auth.test")).some((c) => c.token === token)).toBe(true);
    const row = await env.DB.prepare("SELECT * FROM slack_installations WHERE team_id = 'T123'").first<Record<string, string>>();
    expect(row!.bot_token_sealed).not.toContain("secret-bot-token");
    expect(row!.bot_token_sealed).toMatch(/^v1\./);
    const listed = await call("/api/v1/slack/installations", { token: admin });
    expect(listed.json.installations.map((i: { team_id: string }) => i.team_id)).toContain("T123");
    expect(listed.json.oauth).toBe(true);
    expect(listed.text).not.toContain(token);
  });

  it("refuses a token of another workspace, a revoked one, and non-admins", async () => {
    const mismatch = await installToken("T456", "xoxb-T999-other-team");
    expectProblem(mismatch, 422, "VALIDATION_FAILED");
    expect(mismatch.json.errors).toEqual([{ path: "bot_token", message: expect.stringContaining("T999") }]);
    const revoked = await installToken("T456", "xoxb-revoked-abc");
    expectProblem(revoked, 422, "VALIDATION_FAILED");
    expect(revoked.json.errors[0]).toEqual({ path: "bot_token", message: expect.stringContaining("invalid_auth") });
    expect((await installToken("T456", "not-a-token")).json.errors[0].path).toBe("bot_token");
    expectProblem(await installToken("T456", "xoxb-T456-x", member.token), 403, "FORBIDDEN");
    expect(await env.DB.prepare("SELECT 1 FROM slack_installations WHERE team_id IN ('T456', 'T999')").first()).toBeNull();
  });

  it("answers 502 when Slack fails to answer", async () => {
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`${BASE}/api/v1/slack/installations`, {
        method: "POST",
        headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" },
        body: JSON.stringify({ team_id: "T777", bot_token: "xoxb-T777-x" }),
      }),
      // Where the fake has no Web API: it answers 404, as a Slack in trouble would fail.
      { ...env, SLACK_API_ROOT: `${SLACK_ROOT}/elsewhere/` },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expectProblem(await replyOf(res), 502, "SLACK_REFUSED");
  });
});

describe("installing by OAuth", () => {
  const installUrl = async () => {
    const reply = await call("/api/v1/slack/install-url", { token: admin, method: "POST" });
    expect(reply.status, reply.text).toBe(201);
    return new URL(reply.json.url);
  };
  // The browser Slack sent back would follow the redirect to the dashboard; the test reads where it points.
  const callback = async (query: Record<string, string>) =>
    replyOf(await fetchUrl(`${BASE}/slack/oauth/callback?${new URLSearchParams(query)}`, { redirect: "manual" }));

  it("links to Slack's install page with the scopes, the redirect and a one-use state", async () => {
    const url = await installUrl();
    expect(url.origin + url.pathname).toBe("https://slack.com/oauth/v2/authorize");
    expect(url.searchParams.get("client_id")).toBe("1111.2222");
    expect(url.searchParams.get("redirect_uri")).toBe("https://hub.test/slack/oauth/callback");
    expect(url.searchParams.get("scope")!.split(",")).toContain("chat:write");
    const state = url.searchParams.get("state")!;
    expect(await env.DB.prepare("SELECT 1 FROM slack_oauth_states WHERE state_hash = ?1").bind(state).first()).toBeNull();
    expectProblem(await call("/api/v1/slack/install-url", { token: member.token, method: "POST" }), 403, "FORBIDDEN");
  });

  it("installs the workspace the code is for and goes back to the dashboard", async () => {
    const state = (await installUrl()).searchParams.get("state")!;
    const reply = await callback({ code: "good-t9", state });
    expect(reply.status, reply.text).toBe(302);
    expect(reply.headers.get("Location")).toBe("/settings/slack?installed=T9");
    const row = await env.DB.prepare("SELECT * FROM slack_installations WHERE team_id = 'T9'").first<Record<string, string>>();
    expect(row).toMatchObject({ team_name: "Team T9", source: "oauth", bot_user_id: "UBOT" });
    expect(row!.bot_token_sealed).not.toContain("xoxb-");
    const exchange = (await slackCalls("oauth.v2.access")).find((c) => c.params.code === "good-t9")!;
    expect(exchange.params).toMatchObject({
      client_id: "1111.2222",
      client_secret: "test-slack-client-secret",
      redirect_uri: "https://hub.test/slack/oauth/callback",
    });
    // The state was used: the same link again is refused.
    const again = await callback({ code: "good-t9", state });
    expect(again.status).toBe(400);
    expect(again.headers.get("Content-Type")).toContain("text/html");
    expect(again.text).toContain("unknown, used or expired");
  });

  it("refuses an unknown or expired state, and goes back with Slack's error", async () => {
    expect((await callback({ code: "good-t10", state: "made-up" })).status).toBe(400);
    expect((await callback({ code: "good-t10" })).status).toBe(400);
    const expired = (await installUrl()).searchParams.get("state")!;
    await env.DB.prepare("UPDATE slack_oauth_states SET expires_at = '2000-01-01T00:00:00.000Z'").run();
    expect((await callback({ code: "good-t10", state: expired })).status).toBe(400);
    const denied = await callback({ error: "access_denied", state: (await installUrl()).searchParams.get("state")! });
    expect(denied.status).toBe(302);
    expect(denied.headers.get("Location")).toBe("/settings/slack?error=access_denied");
    const bad = await callback({ code: "bad-code", state: (await installUrl()).searchParams.get("state")! });
    expect(bad.headers.get("Location")).toBe("/settings/slack?error=invalid_code");
    expect(await env.DB.prepare("SELECT 1 FROM slack_installations WHERE team_id = 'T10'").first()).toBeNull();
  });
});

describe("a project's channels", () => {
  const C = (id = project.id) => `/api/v1/projects/${id}/slack-channels`;

  it("asks for the workspace when the app is in several", async () => {
    const reply = await call(C(), { token: member.token, body: { channel_id: "CGEN1" } });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors[0]).toEqual({ path: "team_id", message: expect.stringContaining("several") });
  });

  it("adds, lists, changes and removes a channel", async () => {
    const added = await call(C(), {
      token: member.token,
      body: { channel_id: "COUTA1", team_id: "T123", events: ["intervention_requested", "plan_submitted"] },
    });
    expect(added.status, added.text).toBe(201);
    expect(added.json).toMatchObject({ team_id: "T123", channel_id: "COUTA1", events: ["intervention_requested", "plan_submitted"], muted: false });
    // A public channel the bot was not in is joined.
    expect((await slackCalls("conversations.join")).some((c) => c.params.channel === "COUTA1")).toBe(true);
    const listed = await call(C(), { token: viewer.token });
    expect(listed.json.channels).toEqual([added.json]);
    expect(listed.json.workspaces).toEqual([
      { team_id: "T123", team_name: "Team T123" },
      { team_id: "T9", team_name: "Team T9" },
    ]);
    const muted = await call(`${C()}/${added.json.id}`, { token: member.token, method: "PATCH", body: { muted: true } });
    expect(muted.json).toMatchObject({ muted: true, events: ["intervention_requested", "plan_submitted"] });
    const all = await call(`${C()}/${added.json.id}`, { token: admin, method: "PATCH", body: { events: null } });
    expect(all.json).toMatchObject({ muted: true, events: null });
    // A message still waiting for the channel goes with it.
    await env.DB.prepare(
      `INSERT INTO outbox (id, target_kind, target_id, project_id, seq, event_type, status, attempts, next_attempt_at, created_at)
       VALUES ('msg_waiting', 'slack', 'T123:COUTA1', ?1, 999999, 'task_completed', 'pending', 0, '2000-01-01T00:00:00.000Z', '2000-01-01T00:00:00.000Z')`,
    )
      .bind(project.id)
      .run();
    expect((await call(`${C()}/${added.json.id}`, { token: member.token, method: "DELETE" })).status).toBe(204);
    expect((await call(C(), { token: member.token })).json.channels).toEqual([]);
    expect(await env.DB.prepare("SELECT 1 FROM outbox WHERE id = 'msg_waiting'").first()).toBeNull();
  });

  it("defaults to the only workspace", async () => {
    await call("/api/v1/slack/installations/T9", { token: admin, method: "DELETE" });
    expect(await env.DB.prepare("SELECT 1 FROM slack_installations WHERE team_id = 'T9'").first()).toBeNull();
    const added = await call(C(), { token: member.token, body: { channel_id: "CONE1" } });
    expect(added.status, added.text).toBe(201);
    expect(added.json).toMatchObject({ team_id: "T123", events: null });
    expect((await slackCalls("conversations.join")).some((c) => c.params.channel === "CONE1")).toBe(false);
  });

  it("refuses bad events, an unknown channel, a duplicate, viewers and other projects", async () => {
    const badEvents = await call(C(), { token: member.token, body: { channel_id: "CTWO1", events: ["task_created"] } });
    expectProblem(badEvents, 422, "VALIDATION_FAILED");
    expect(badEvents.json.errors[0].path).toBe("events.0");
    const unknown = await call(C(), { token: member.token, body: { channel_id: "CNONE1" } });
    expectProblem(unknown, 422, "VALIDATION_FAILED");
    expect(unknown.json.errors[0].path).toBe("channel_id");
    expect((await call(C(), { token: member.token, body: { channel_id: "nope" } })).json.errors[0].path).toBe("channel_id");
    expectProblem(await call(C(), { token: member.token, body: { channel_id: "CONE1" } }), 409, "CONFLICT");
    expectProblem(await call(C(), { token: viewer.token, body: { channel_id: "CTWO1" } }), 403, "FORBIDDEN");
    const [mine] = (await call(C(), { token: viewer.token })).json.channels;
    expectProblem(await call(`${C()}/${mine.id}`, { token: viewer.token, method: "PATCH", body: { muted: true } }), 403, "FORBIDDEN");
    expectProblem(await call(`${C()}/${mine.id}`, { token: viewer.token, method: "DELETE" }), 403, "FORBIDDEN");
    // Another project's channel id answers 404 under this project, and this project's under another.
    expectProblem(await call(`${C(other.id)}/${mine.id}`, { token: admin, method: "PATCH", body: { muted: true } }), 404, "NOT_FOUND");
    expectProblem(await call(`${C(other.id)}/${mine.id}`, { token: admin, method: "DELETE" }), 404, "NOT_FOUND");
    expectProblem(await call(C(other.id), { token: member.token }), 404, "NOT_FOUND");
    const patchEvents = await call(`${C()}/${mine.id}`, { token: member.token, method: "PATCH", body: { events: [] } });
    expect(patchEvents.json.errors[0].path).toBe("events");
    expect((await call(C(), { token: member.token })).json.channels).toEqual([expect.objectContaining({ channel_id: "CONE1", muted: false })]);
  });

  it("forgets a workspace's installation", async () => {
    expectProblem(await call("/api/v1/slack/installations/TNOPE", { token: admin, method: "DELETE" }), 404, "NOT_FOUND");
    expect((await call("/api/v1/slack/installations/T123", { token: admin, method: "DELETE" })).status).toBe(204);
    expect((await call("/api/v1/slack/installations", { token: admin })).json.installations).toEqual([]);
    const none = await call(C(), { token: member.token, body: { channel_id: "CTHREE1" } });
    expect(none.json.errors[0]).toEqual({ path: "team_id", message: expect.stringContaining("not installed") });
  });
});
