/**
 * Slack on the account page: linking the person's Slack user by a one-use code typed as `/orc link <code>` in Slack,
 * and unlinking. Whatever a linked Slack user does there, they do as this person, with this person's role.
 */
import { hub, ok } from "../api";
import { Failed, Loading } from "../ui/states";
import { absoluteTime } from "../time-format";
import { useChatLink } from "./chat-link";
import { CopyLine } from "./copy";

export function SlackLinkSection() {
  const { link, code, expired, error, load, requestCode, unlink, busy, problem } = useChatLink({
    chat: "Slack",
    read: () => ok(hub.GET("/api/v1/auth/me/slack")),
    createCode: () => ok(hub.POST("/api/v1/auth/me/slack-link")),
    unlink: () => ok(hub.DELETE("/api/v1/auth/me/slack")),
  });

  return (
    <section class="panel slack-link" aria-labelledby="slack-link-title">
      <h2 id="slack-link-title">Slack</h2>
      <p class="muted">Answer questions and approve plans from your projects' Slack channels, and use /orc, as yourself.</p>
      {!link && (error ? <Failed what="your Slack link" message={error} retry={load} /> : <Loading what="your Slack link" />)}
      {link && (
        <p data-slack={link.linked ? "linked" : "not-linked"}>
          {link.linked ? (
            <>
              <span class="status status-delivered">Linked</span> to <code>{link.slack_user_id}</code> since{" "}
              <time dateTime={link.linked_at ?? undefined}>{absoluteTime(link.linked_at!)}</time>
            </>
          ) : (
            <span class="status status-closed">Not linked</span>
          )}
        </p>
      )}
      {code ? (
        <div class="link-code slack-code" role="status">
          <CopyLine label="Type this in Slack (any channel or message box)" value={code.command} name="slack-link-command" />
          <p>
            It works once, until <time dateTime={code.expires_at}>{absoluteTime(code.expires_at)}</time>; this page notices when Slack is linked.
          </p>
        </div>
      ) : (
        link && (
          <div class="actions-row">
            <span class="action">
              <button type="button" class={link.linked ? "secondary" : undefined} disabled={busy !== null} onClick={() => void requestCode()}>
                {link.linked ? "Link another Slack user" : "Link Slack"}
              </button>
              {problem("link")}
            </span>
            {link.linked && (
              <span class="action">
                <button
                  type="button"
                  class="danger"
                  disabled={busy !== null}
                  onClick={() => confirm("Unlink Slack? Buttons and /orc in Slack no longer act for you.") && void unlink()}
                >
                  Unlink
                </button>
                {problem("unlink")}
              </span>
            )}
          </div>
        )
      )}
      {expired && <p class="muted">The code expired before Slack used it: ask for a new one.</p>}
    </section>
  );
}
