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
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
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
      <Problem message={feed.error ?? (hooks ? error : null)} />
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
          <h2>Webhooks</h2>
          {hooks === null ? (
            error ? (
              <Failed what="the webhooks" message={error} retry={() => reread(0)} />
            ) : (
              <Loading what="webhooks" />
            )
          ) : hooks.length === 0 ? (
            <Empty title="No webhooks yet.">Add one above to have this project's events posted to a URL of yours.</Empty>
          ) : (
            <DataTable
              class="webhooks"
              label="Webhooks"
              rows={hooks}
              rowKey={(h) => h.id}
              rowAttributes={(h) => ({ "data-webhook-id": h.id, "aria-current": h.id === webhookId ? "true" : undefined })}
              columns={[
                { label: "Endpoint", rowHeader: true, cell: (h) => <Endpoint projectId={projectId} hook={h} current={h.id === webhookId} /> },
                {
                  label: "Events",
                  cell: (h) =>
                    h.events === null ? (
                      <span class="muted">all events</span>
                    ) : (
                      <span title={h.events.join(", ")}>{h.events.map((t) => t.replaceAll("_", " ")).join(", ")}</span>
                    ),
                },
                { label: "State", cell: (h) => <HookState hook={h} /> },
                {
                  label: "Actions",
                  actions: true,
                  cell: (h) => <WebhookControls hook={h} onChanged={() => reread(0)} onSecret={showSecret} onTested={() => setAsked((n) => n + 1)} />,
                },
              ]}
            />
          )}
          {webhookId && hooks && !selected && <p class="problem">That webhook is not in this project (any more).</p>}
          {selected && <Deliveries key={selected.id} hook={selected} asked={asked} />}
        </>
      )}
    </section>
  );
}

/** Where a webhook posts, what it is for, and the way to its deliveries, each on a line of its own. */
function Endpoint({ projectId, hook: h, current }: { projectId: string; hook: Webhook; current: boolean }) {
  return (
    <div class="endpoint">
      <code class="url">{h.url}</code>
      {h.description && <span class="muted">{h.description}</span>}
      <a class="deliveries-link small" {...linkProps(`/projects/${projectId}/webhooks/${h.id}`)} aria-current={current ? "page" : undefined}>
        Deliveries
      </a>
    </div>
  );
}

function HookState({ hook: h }: { hook: Webhook }) {
  return (
    <>
      <span class={`status status-${h.enabled ? "enabled" : "disabled"}`} data-enabled={String(h.enabled)}>
        {h.enabled ? "enabled" : "disabled"}
      </span>
      {!h.enabled && h.disabled_reason && <div class="problem small">{h.disabled_reason}</div>}
      {h.previous_secret_expires_at && <div class="muted small">previous secret signs until {absoluteTime(h.previous_secret_expires_at)}</div>}
    </>
  );
}
