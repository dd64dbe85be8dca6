/**
 * A project's webhooks, for its members and admins: adding one (its secret
 * shown once), the list with what each is sent and whether the hub disabled
 * it, the controls for each, and one webhook's deliveries when its address
 * names it. Read again when the hub disables one (a `webhook_disabled` event).
 */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { useCanWrite } from "../me";
import { useProjectFeed, useReread } from "../project-feed";
import { linkProps } from "../router";
import type { Webhook, WebhookWithSecret } from "../types";
import { Problem } from "./controls";
import { Deliveries } from "./deliveries";
import { NewWebhook } from "./new-webhook";
import { ProjectTabs } from "./project-tabs";
import { SecretOnce, type ShownSecret } from "./secret-once";
import { WebhookControls } from "./webhook-controls";
import { absoluteTime } from "../time-format";

export function Webhooks({ projectId, webhookId }: { projectId: string; webhookId?: string }) {
  const canWrite = useCanWrite();
  const feed = useProjectFeed(projectId);
  const [hooks, setHooks] = useState<Webhook[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [shown, setShown] = useState<ShownSecret | null>(null);
  const [asked, setAsked] = useState(0);
  const reread = useReread(
    () => ok(hub.GET("/api/v1/projects/{id}/webhooks", { params: { path: { id: projectId } } })),
    (r) => {
      setHooks(r.webhooks);
      setError(null);
    },
    setError,
  );
  useEffect(() => {
    setHooks(null);
    setShown(null);
    if (feed.project && canWrite) reread(0);
  }, [feed.project]);
  useEffect(() => {
    if (feed.latest.length === 0 || !canWrite) return;
    if (feed.latest.some((e) => e.event_type === "webhook_disabled")) reread();
    // Any event may be owed to the webhook whose deliveries are shown.
    setAsked((n) => n + 1);
  }, [feed.latest]);

  const showSecret = (hook: WebhookWithSecret) =>
    setShown({ webhookId: hook.id, url: hook.url, secret: hook.secret, previousUntil: hook.previous_secret_expires_at });
  const selected = hooks?.find((h) => h.id === webhookId);

  return (
    <section class="webhooks-page">
      <ProjectTabs projectId={projectId} name={feed.project?.name} current="webhooks" status={feed.status} />
      <Problem message={feed.error ?? error} />
      {!canWrite ? (
        <p class="read-only" data-read-only>
          Read-only: a project's webhooks are set up by its members and admins.
        </p>
      ) : (
        <>
          <NewWebhook
            projectId={projectId}
            onCreated={(hook) => {
              showSecret(hook);
              reread(0);
            }}
          />
          {shown && <SecretOnce shown={shown} onDone={() => setShown(null)} />}
          {hooks && hooks.length > 0 && (
            <table class="servers webhooks" data-loaded="true">
              <thead>
                <tr>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                  <th scope="col">
                    <span class="muted">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {hooks.map((h) => (
                  <tr key={h.id} data-webhook-id={h.id} aria-current={h.id === webhookId ? "true" : undefined}>
                    <th scope="row">
                      <code class="url">{h.url}</code>
                      {h.description && <div class="muted">{h.description}</div>}
                      <a class="small" {...linkProps(`/projects/${projectId}/webhooks/${h.id}`)}>
                        Deliveries
                      </a>
                    </th>
                    <td class="events" title={h.events?.join(", ")}>
                      {h.events === null ? <span class="muted">all events</span> : h.events.map((t) => t.replaceAll("_", " ")).join(", ")}
                    </td>
                    <td>
                      <span class={`status status-${h.enabled ? "enabled" : "disabled"}`} data-enabled={String(h.enabled)}>
                        {h.enabled ? "enabled" : "disabled"}
                      </span>
                      {!h.enabled && h.disabled_reason && <div class="problem small">{h.disabled_reason}</div>}
                      {h.previous_secret_expires_at && <div class="muted small">previous secret signs until {absoluteTime(h.previous_secret_expires_at)}</div>}
                    </td>
                    <td>
                      <WebhookControls hook={h} onChanged={() => reread(0)} onSecret={showSecret} onTested={() => setAsked((n) => n + 1)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {hooks?.length === 0 && <p class="muted">No webhooks yet: add one to have this project's events posted to a URL of yours.</p>}
          {webhookId && hooks && !selected && <p class="problem">That webhook is not in this project (any more).</p>}
          {selected && <Deliveries key={selected.id} hook={selected} asked={asked} />}
        </>
      )}
    </section>
  );
}
