/**
 * Slack on the account page: linking the person's Slack user by a one-use code typed as `/orc link <code>` in Slack,
 * and unlinking. Whatever a linked Slack user does there, they do as this person, with this person's role.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import type { SlackLink, SlackLinkCode } from "../types";
import { Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { absoluteTime } from "../time-format";
import { useAction } from "./controls";
import { CopyLine } from "./copy";

/** How often the link is read again while a code waits to be typed in Slack. */
const POLL_MS = 3_000;

const readLink = () => ok(hub.GET("/api/v1/auth/me/slack"));

export function SlackLinkSection() {
  const [link, setLink] = useState<SlackLink | null>(null);
  const [code, setCode] = useState<SlackLinkCode | null>(null);
  const [expired, setExpired] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { run, busy, problem } = useAction();

  const load = () =>
    void readLink().then(
      (l) => (setLink(l), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(load, []);

  // The link is made in Slack, out of this page's sight: read it until the code is used or expires.
  useEffect(() => {
    if (!code) return;
    const before = link?.linked_at ?? null;
    const timer = setInterval(() => {
      if (Date.parse(code.expires_at) <= Date.now()) {
        setCode(null);
        setExpired(true);
        return;
      }
      void readLink().then(
        (now) => {
          if (!now.linked || now.linked_at === before) return;
          setLink(now);
          setCode(null);
          toast("Slack linked.");
        },
        () => undefined,
      );
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [code]);

  const requestCode = () =>
    run("link", async () => {
      setExpired(false);
      setCode(await ok(hub.POST("/api/v1/auth/me/slack-link")));
    });
  const unlink = () =>
    run("unlink", async () => {
      await ok(hub.DELETE("/api/v1/auth/me/slack"));
      setCode(null);
      setLink(await readLink());
      toast("Slack unlinked.");
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
