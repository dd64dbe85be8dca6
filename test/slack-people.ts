/** Slack users as the door tests play them: a workspace installed, people linked by `/orc link <code>`, and the private answers they get. */
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { seal } from "../src/auth/sealed";
import { call, until } from "./helpers";
import { interaction, postSigned, responseUrl, slackCalls, slashCommand } from "./slack";

/** A workspace the app is installed in, with a bot token the fake takes as that team's. */
export async function installTeam(team: string) {
  const now = new Date().toISOString();
  await env.DB.prepare(
    `INSERT OR REPLACE INTO slack_installations (team_id, team_name, bot_token_sealed, bot_user_id, source, installed_by, created_at, updated_at)
     VALUES (?1, ?2, ?3, 'UBOT', 'token', 'test', ?4, ?4)`,
  )
    .bind(team, `Team ${team}`, await seal(env.DATA_KEY, `xoxb-${team}-x`), now)
    .run();
}

export interface SlackUser {
  team: string;
  user: string;
  channel?: string;
}

/** What was posted to a response URL (by the last path segment), once it has been. */
export async function responded(name: string, timeoutMs = 8000): Promise<Record<string, any>> {
  const calls = await until(
    async () => (await slackCalls("response_url")).filter((c) => c.params.path === `/response/${name}`),
    (found) => found.length > 0,
    `the answer posted to ${name}`,
    timeoutMs,
  );
  expect(calls).toHaveLength(1);
  return calls[0]!.params;
}

/** Everything said in an answer: its text and its blocks' texts. */
export const saidIn = (answer: Record<string, any>) => [answer.text, ...(answer.blocks ?? []).map((b: any) => b.text?.text ?? "")].join("\n");

/** Types `/orc <text>` and waits for the private answer. */
export async function orc(who: SlackUser, text: string) {
  const name = crypto.randomUUID();
  const res = await postSigned("/slack/commands", slashCommand(text, who, responseUrl(name)));
  expect(res.status, await res.clone().text()).toBe(200);
  expect(await res.text()).toBe("");
  const answer = await responded(name);
  expect(answer.response_type).toBe("ephemeral");
  return { answer, said: saidIn(answer) };
}

/** Links a Slack user to a person as a person does: a code from the hub, then `/orc link <code>`. */
export async function linkSlack(token: string, who: SlackUser) {
  const { json } = await call("/api/v1/auth/me/slack-link", { method: "POST", token });
  expect(json.command).toBe(`/orc link ${json.code}`);
  const { said } = await orc(who, `link ${json.code}`);
  expect(said).toContain("Linked to");
  return json.code as string;
}

/** A click on a button of a channel's message, as Slack posts it; its response URL's name is returned. */
export async function click(who: SlackUser, value: string, name = crypto.randomUUID()) {
  const res = await postSigned(
    "/slack/interactions",
    interaction({
      type: "block_actions",
      team: { id: who.team, domain: who.team.toLowerCase() },
      user: { id: who.user, name: who.user.toLowerCase() },
      api_app_id: "AAPP",
      trigger_id: `trig.${name}`,
      actions: [{ type: "button", action_id: value, value, block_id: "b" }],
      response_url: responseUrl(name),
      container: { type: "message", channel_id: who.channel ?? "C0GENERAL", message_ts: "1800000000.000100" },
    }),
  );
  return { res, name };
}

/** A modal's submission with the text typed into its one input. */
export function submit(who: SlackUser, callbackId: string, text: string | null) {
  return postSigned(
    "/slack/interactions",
    interaction({
      type: "view_submission",
      team: { id: who.team, domain: who.team.toLowerCase() },
      user: { id: who.user, name: who.user.toLowerCase() },
      api_app_id: "AAPP",
      view: {
        id: "VMODAL",
        type: "modal",
        callback_id: callbackId,
        private_metadata: "",
        state: { values: { text: { text: { type: "plain_text_input", value: text } } } },
      },
    }),
  );
}
