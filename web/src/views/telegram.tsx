/**
 * Telegram on the account page: linking the person's chat by a one-time code
 * (the bot's deep link carries it), unlinking, and, for admins, pointing the
 * bot at this hub.
 */
import { useState } from "preact/hooks";
import { hub, ok } from "../api";
import type { BotSetup as BotSetupAnswer } from "../types";
import { Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { useChatLink } from "./chat-link";
import { useAction } from "./controls";
import { absoluteTime } from "../time-format";

export function TelegramSection() {
  const { link, code, expired, error, load, requestCode, unlink, busy, problem } = useChatLink({
    chat: "Telegram",
    read: () => ok(hub.GET("/api/v1/auth/me/telegram")),
    createCode: () => ok(hub.POST("/api/v1/auth/me/telegram-link")),
    unlink: () => ok(hub.DELETE("/api/v1/auth/me/telegram")),
  });

  return (
    <section class="panel telegram" aria-labelledby="telegram-title">
      <h2 id="telegram-title">Telegram</h2>
      <p class="muted">Questions, plans to review, failures and finished tasks from your projects, answered from the chat.</p>
      {!link && (error ? <Failed what="your Telegram link" message={error} retry={load} /> : <Loading what="your Telegram link" />)}
      {link && (
        <p data-telegram={link.linked ? "linked" : "not-linked"}>
          {link.linked ? (
            <>
              <span class="status status-delivered">Linked</span> since <time dateTime={link.linked_at ?? undefined}>{absoluteTime(link.linked_at!)}</time>
              {link.muted && (
                <>
                  {" "}
                  · <span class="status status-pending">muted</span> <span class="muted">the bot tells you nothing until you send it /mute again</span>
                </>
              )}
            </>
          ) : (
            <span class="status status-closed">Not linked</span>
          )}
        </p>
      )}
      {code ? (
        <div class="link-code" role="status">
          <a class="button" href={code.deep_link} target="_blank" rel="noopener noreferrer">
            Open in Telegram
          </a>
          <p>
            Press <strong>Start</strong> in the chat that opens (or send it <code>/start {code.code}</code>). The link works once, until{" "}
            <time dateTime={code.expires_at}>{absoluteTime(code.expires_at)}</time>; this page notices when the chat is linked.
          </p>
        </div>
      ) : (
        link && (
          <div class="actions-row">
            <span class="action">
              <button type="button" class={link.linked ? "secondary" : undefined} disabled={busy !== null} onClick={() => void requestCode()}>
                {link.linked ? "Link another chat" : "Link Telegram"}
              </button>
              {problem("link")}
            </span>
            {link.linked && (
              <span class="action">
                <button
                  type="button"
                  class="danger"
                  disabled={busy !== null}
                  onClick={() => confirm("Unlink Telegram? The bot stops telling you anything and acts for you no more.") && void unlink()}
                >
                  Unlink
                </button>
                {problem("unlink")}
              </span>
            )}
          </div>
        )
      )}
      {expired && <p class="muted">The link expired before the chat used it: ask for a new one.</p>}
    </section>
  );
}

/** Asks Telegram who the bot is and points its webhook here (the bot's token and secret are the hub's secrets). */
export function BotSetup() {
  const [bot, setBot] = useState<BotSetupAnswer | null>(null);
  const { run, busy, problem } = useAction();
  return (
    <section class="panel" aria-labelledby="bot-title">
      <h2 id="bot-title">Telegram bot</h2>
      <p class="muted">
        Tells Telegram to send the bot's updates to this hub. Needed once before anyone can link a chat, and again when the hub's address changes.
      </p>
      <span class="action">
        <button
          type="button"
          disabled={busy !== null}
          aria-busy={busy !== null}
          onClick={() =>
            void run("setup", async () => {
              setBot(await ok(hub.POST("/api/v1/telegram/setup")));
              toast("The bot's updates now come to this hub.");
            })
          }
        >
          Set up the bot
        </button>
        {problem("setup")}
      </span>
      {bot && (
        <dl class="facts" data-bot={bot.bot_username}>
          <dt>Bot</dt>
          <dd>
            <a href={`https://t.me/${bot.bot_username}`} target="_blank" rel="noopener noreferrer">
              @{bot.bot_username}
            </a>
          </dd>
          <dt>Its updates go to</dt>
          <dd>
            <code>{bot.webhook_url}</code>
          </dd>
        </dl>
      )}
    </section>
  );
}
