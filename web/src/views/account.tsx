/**
 * The signed-in person: who they are to the hub, their password, their personal access tokens, the MCP clients they
 * allowed, and their Telegram and Slack links (admins also set up the bot, and find Slack's settings).
 */
import { useMe } from "../me";
import { McpClientsSection } from "./mcp-clients";
import { PasswordSection } from "./password-form";
import { PersonalTokensSection } from "./personal-tokens";
import { linkProps } from "../router";
import { SlackLinkSection } from "./slack-link";
import { BotSetup, TelegramSection } from "./telegram";

export function Account() {
  const me = useMe();
  return (
    <section class="account">
      <h1>Account</h1>
      <dl class="facts">
        {me.name && (
          <>
            <dt>Name</dt>
            <dd>{me.name}</dd>
          </>
        )}
        <dt>Email</dt>
        <dd>{me.email}</dd>
        <dt>Role</dt>
        <dd>{me.role}</dd>
      </dl>
      <PasswordSection />
      <PersonalTokensSection />
      <McpClientsSection />
      <TelegramSection />
      {me.role === "admin" && <BotSetup />}
      <SlackLinkSection />
      {me.role === "admin" && (
        <p class="muted">
          Installing the Slack app: <a {...linkProps("/settings/slack")}>Slack settings</a>.
        </p>
      )}
    </section>
  );
}
