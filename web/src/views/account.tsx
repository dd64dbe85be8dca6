/** The signed-in person: who they are to the hub, and their Telegram link (admins also set up the bot). */
import { useMe } from "../me";
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
      <TelegramSection />
      {me.role === "admin" && <BotSetup />}
    </section>
  );
}
