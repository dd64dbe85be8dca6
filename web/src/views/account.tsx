/**
 * The signed-in person: who they are to the hub, the MCP clients they allowed, and their Telegram link (admins also
 * set up the bot).
 */
import { useMe } from "../me";
import { McpClientsSection } from "./mcp-clients";
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
      <McpClientsSection />
      <TelegramSection />
      {me.role === "admin" && <BotSetup />}
    </section>
  );
}
