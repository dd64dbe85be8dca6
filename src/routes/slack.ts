/**
 * Slack's setup by an admin (API.md "Slack"): the app's manifest with this hub's URLs, and the workspaces it is
 * installed in, by a pasted bot token or Slack's OAuth v2 install flow (its callback lands on `/slack/oauth/callback`).
 */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { SlackAPIError } from "slack-edge";
import { z } from "zod";
import { randomSecret, sha256Hex } from "../auth/secrets";
import { seal } from "../auth/sealed";
import { nowIso } from "../db/client";
import { slackInstallations, slackOauthStates } from "../db/schema";
import { hubBaseUrl } from "../http/base-url";
import { readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { label } from "../http/fields";
import { fieldError, notFound, Problem } from "../http/problem";
import { slackClient, slackFailure, TOKEN_GONE } from "../integrations/slack/api";
import { forgetInstallation } from "../integrations/slack/installations";
import { SLACK_BOT_SCOPES, slackManifest } from "../integrations/slack/manifest";
import { currentUser, person } from "../middleware/guards";
import { documented, type Operation } from "../openapi/operation";
import { slackInstallationSchema, slackInstallationView } from "../views/slack";

/** How long an install link works. */
const OAUTH_STATE_MS = 10 * 60 * 1000;
/** The dashboard's page an install comes back to. */
const SETTINGS_PAGE = "/settings/slack";

export const slackAdminRoutes = new Hono<HubEnv>();

/** Every admin route of Slack's setup. */
const adminOperation = (op: Omit<Operation, "tag" | "caller">) => documented({ ...op, tag: "Slack", caller: "person" });

const redirectUri = (c: HubContext) => `${hubBaseUrl(c)}/slack/oauth/callback`;

/** Slack could not be asked (unreachable, or it failed): the hub cannot tell whether the token is good. */
const slackRefused = (e: unknown) => new Problem(502, "SLACK_REFUSED", `Slack did not answer: ${slackFailure(e).error}`);

slackAdminRoutes.get(
  "/manifest",
  adminOperation({
    id: "getSlackManifest",
    summary: "The Slack app's manifest",
    description:
      "The manifest to create the hub's Slack app from (api.slack.com/apps → Create New App → From an app manifest), with this hub's URLs " +
      "(`PUBLIC_URL`, or the origin of this request): the `/orc` command, interactivity, the `app_uninstalled` and `tokens_revoked` events " +
      "and the OAuth redirect. Admins only.",
    responses: { 200: z.record(z.string(), z.unknown()).meta({ description: "Slack's [app manifest](https://api.slack.com/reference/manifests), as JSON" }) },
  }),
  person("admin"),
  (c) => c.json(slackManifest(hubBaseUrl(c))),
);

const tokenBody = z.object({
  team_id: z
    .string()
    .trim()
    .regex(/^[TE][A-Z0-9]{2,20}$/, "must be a Slack workspace id (`T…`)"),
  bot_token: label(200).regex(/^xoxb-[\w-]+$/, "must be a bot token (`xoxb-…`)"),
});

/** Upserts a workspace's installation; the token sealed. */
async function install(
  c: HubContext,
  row: { teamId: string; teamName: string | null; botUserId: string | null; token: string; source: "oauth" | "token"; by: string },
) {
  const now = nowIso();
  const values = {
    teamId: row.teamId,
    teamName: row.teamName,
    botUserId: row.botUserId,
    botTokenSealed: await seal(c.env.DATA_KEY, row.token),
    hubUrl: hubBaseUrl(c),
    source: row.source,
    installedBy: row.by,
    createdAt: now,
    updatedAt: now,
  };
  const { createdAt: _, ...changed } = values;
  const [saved] = await c.var.db.insert(slackInstallations).values(values).onConflictDoUpdate({ target: slackInstallations.teamId, set: changed }).returning();
  return saved!;
}

slackAdminRoutes.post(
  "/installations",
  adminOperation({
    id: "installSlackToken",
    summary: "Install Slack by its bot token",
    description:
      "Install the app in a workspace by its bot token (`xoxb-…`, from the app's OAuth & Permissions page), in place of the OAuth install.\n\n" +
      "The hub asks Slack whose token it is (`auth.test`): 422 naming `bot_token` when Slack refuses it or it belongs to another workspace than `team_id`; " +
      "502 `SLACK_REFUSED` when Slack cannot be reached. The token is kept sealed with `DATA_KEY` and never answered back. " +
      "Installing again in the same workspace replaces its token.",
    body: tokenBody,
    responses: { 201: slackInstallationSchema },
  }),
  person("admin"),
  async (c) => {
    const body = await readJson(c, tokenBody);
    let who;
    try {
      who = await slackClient(c.env, body.bot_token).auth.test();
    } catch (e) {
      if (e instanceof SlackAPIError) throw fieldError("bot_token", `Slack refused the token (${e.error})`);
      throw slackRefused(e);
    }
    if (who.team_id !== body.team_id) throw fieldError("bot_token", `the token belongs to workspace ${who.team_id}, not ${body.team_id}`);
    const saved = await install(c, {
      teamId: body.team_id,
      teamName: who.team ?? null,
      botUserId: who.user_id ?? null,
      token: body.bot_token,
      source: "token",
      by: currentUser(c).id,
    });
    return c.json(slackInstallationView(saved), 201);
  },
);

slackAdminRoutes.get(
  "/installations",
  adminOperation({
    id: "listSlackInstallations",
    summary: "The workspaces Slack is installed in",
    description: "Oldest first; never their tokens. Admins only.",
    responses: {
      200: z.object({
        installations: z.array(slackInstallationSchema),
        oauth: z.boolean().meta({ description: "Whether the OAuth install is set up (`SLACK_CLIENT_ID` and `SLACK_CLIENT_SECRET`)" }),
      }),
    },
  }),
  person("admin"),
  async (c) => {
    const rows = await c.var.db.select().from(slackInstallations).orderBy(slackInstallations.createdAt);
    return c.json({ installations: rows.map(slackInstallationView), oauth: Boolean(c.env.SLACK_CLIENT_ID && c.env.SLACK_CLIENT_SECRET) });
  },
);

slackAdminRoutes.delete(
  "/installations/:team_id",
  adminOperation({
    id: "deleteSlackInstallation",
    summary: "Forget a workspace",
    description:
      "The hub forgets the workspace's token and the messages it still owed its channels; projects' channels there stay listed but get nothing " +
      "until the app is installed again. Slack keeps the app installed until a workspace admin removes it there.",
    responses: { 204: { description: "Forgotten" } },
  }),
  person("admin"),
  async (c) => {
    const teamId = c.req.param("team_id");
    const row = await c.var.db.query.slackInstallations.findFirst({ where: eq(slackInstallations.teamId, teamId) });
    if (!row) throw notFound("Slack installation");
    await forgetInstallation(c.env, teamId);
    return c.body(null, 204);
  },
);

slackAdminRoutes.post(
  "/install-url",
  adminOperation({
    id: "createSlackInstallUrl",
    summary: "Begin the OAuth install",
    description:
      "A link to Slack's install page (OAuth v2) with the bot scopes the hub needs and a one-use `state` that works for ten minutes. " +
      "Slack sends the admin back to `/slack/oauth/callback`, which installs the app and opens the dashboard's Slack settings. " +
      "503 `NOT_CONFIGURED` without `SLACK_CLIENT_ID` and `SLACK_CLIENT_SECRET`.",
    responses: { 201: z.object({ url: z.string().meta({ format: "uri" }), expires_at: z.string().meta({ format: "date-time" }) }) },
  }),
  person("admin"),
  async (c) => {
    if (!c.env.SLACK_CLIENT_ID || !c.env.SLACK_CLIENT_SECRET) {
      throw new Problem(503, "NOT_CONFIGURED", "The OAuth install needs the SLACK_CLIENT_ID and SLACK_CLIENT_SECRET secrets; or paste a bot token instead");
    }
    const state = randomSecret();
    const expiresAt = new Date(Date.now() + OAUTH_STATE_MS).toISOString();
    await c.var.db.insert(slackOauthStates).values({ stateHash: await sha256Hex(state), userId: currentUser(c).id, expiresAt });
    const url = new URL("https://slack.com/oauth/v2/authorize");
    url.search = new URLSearchParams({ client_id: c.env.SLACK_CLIENT_ID, scope: SLACK_BOT_SCOPES.join(","), redirect_uri: redirectUri(c), state }).toString();
    c.set("secretResponse", "sealed");
    return c.json({ url: url.href, expires_at: expiresAt }, 201);
  },
);

/** `GET /slack/oauth/callback`: where Slack sends the admin back from its install page. */
export const slackOauthRoutes = new Hono<HubEnv>();

const callbackQuery = z.object({ code: z.string().max(500).optional(), state: z.string().max(200).optional(), error: z.string().max(200).optional() });

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** A page for a person whose install link no longer works: they came from a browser, so it is not a problem document. */
const statePage = (c: HubContext, message: string) =>
  c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Slack install</title></head>` +
      `<body style="font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem"><h1>Slack was not installed</h1>` +
      `<p>${escapeHtml(message)}</p><p><a href="${SETTINGS_PAGE}">Back to Slack settings</a></p></body></html>`,
    400,
  );

const backTo = (c: HubContext, query: Record<string, string>) => c.redirect(`${SETTINGS_PAGE}?${new URLSearchParams(query)}`, 302);

slackOauthRoutes.get(
  "/oauth/callback",
  documented({
    id: "finishSlackInstall",
    tag: "Slack",
    summary: "Slack's OAuth redirect",
    description:
      "Where Slack sends the admin back from its install page, with `code` and the `state` of `POST /api/v1/slack/install-url` (one use, ten minutes). " +
      "The hub trades the code for the workspace's bot token (`oauth.v2.access`), installs it and redirects to the dashboard's " +
      "`/settings/slack?installed=<team_id>`, or `?error=<slack's error>` when Slack or the admin refused. An unknown, used or expired `state` " +
      "answers 400 with a page saying so.",
    caller: "anyone",
    query: callbackQuery,
    responses: { 302: { description: "To the dashboard's Slack settings" } },
    // The admin's browser follows Slack here: a refusal is a page for them to read.
    refusalsAlsoAs: ["text/html"],
  }),
  async (c) => {
    const query = readQuery(c, callbackQuery);
    const hash = query.state ? await sha256Hex(query.state) : null;
    const [state] = hash ? await c.var.db.delete(slackOauthStates).where(eq(slackOauthStates.stateHash, hash)).returning() : [];
    if (!state || state.expiresAt < nowIso()) return statePage(c, "This install link is unknown, used or expired. Start again from the hub's Slack settings.");
    if (query.error || !query.code) return backTo(c, { error: query.error ?? "no_code" });
    let granted;
    try {
      granted = await slackClient(c.env).oauth.v2.access({
        client_id: c.env.SLACK_CLIENT_ID!,
        client_secret: c.env.SLACK_CLIENT_SECRET!,
        code: query.code,
        redirect_uri: redirectUri(c),
      });
    } catch (e) {
      return backTo(c, { error: e instanceof SlackAPIError ? e.error : "slack_unreachable" });
    }
    const teamId = granted.team?.id;
    if (!teamId || !granted.access_token) return backTo(c, { error: "no_bot_token" });
    await install(c, {
      teamId,
      teamName: granted.team?.name ?? null,
      botUserId: granted.bot_user_id ?? null,
      token: granted.access_token,
      source: "oauth",
      by: state.userId,
    });
    return backTo(c, { installed: teamId });
  },
);

/** What a failed call to Slack means for a route acting in a workspace: 422 naming `field` when its token no longer works, 502 otherwise. */
export function slackProblem(e: unknown, field: string): Problem {
  if (e instanceof SlackAPIError && TOKEN_GONE.has(e.error))
    return fieldError(field, `the app's token for that workspace no longer works (${e.error}): install it again`);
  return slackRefused(e);
}
