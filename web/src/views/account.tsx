/**
 * The signed-in person: who they are to the hub, their password, their personal access tokens, the MCP clients they
 * allowed, and their Telegram link (admins also set up the bot).
 */
import { useMe } from "../me";
import { McpClientsSection } from "./mcp-clients";
import { PasswordSection } from "./password-form";
import { PersonalTokensSection } from "./personal-tokens";
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
    </section>
  );
}
