/** What can be done to one webhook: enabling or disabling it, a new secret, a test delivery, deleting it. */
import { hub, ok } from "../api";
import { navigate } from "../router";
import type { Webhook, WebhookWithSecret } from "../types";
import { useAction } from "./controls";

interface Props {
  hook: Webhook;
  onChanged: () => void;
  onSecret: (hook: WebhookWithSecret) => void;
  /** A test delivery was queued (the deliveries are read again). */
  onTested: () => void;
}

export function WebhookControls({ hook, onChanged, onSecret, onTested }: Props) {
  const { run, busy, problem } = useAction();
  const path = { params: { path: { id: hook.project_id, wid: hook.id } } };
  const control = (key: string, label: string, act: () => Promise<unknown>, danger = false) => (
    <span class="action">
      <button
        type="button"
        class={danger ? "danger" : "secondary"}
        disabled={busy !== null}
        aria-label={`${label} ${hook.url}`}
        onClick={() => void run(key, act)}
      >
        {label}
      </button>
      {problem(key)}
    </span>
  );
  return (
    <span class="webhook-controls">
      {control(hook.enabled ? "disable" : "enable", hook.enabled ? "Disable" : "Enable", async () => {
        await ok(hub.PATCH("/api/v1/projects/{id}/webhooks/{wid}", { ...path, body: { enabled: !hook.enabled } }));
        onChanged();
      })}
      {control("test", "Send test", async () => {
        await ok(hub.POST("/api/v1/projects/{id}/webhooks/{wid}/test", path));
        navigate(`/projects/${hook.project_id}/webhooks/${hook.id}`);
        onTested();
      })}
      {control("rotate", "Rotate secret", async () => {
        if (!confirm(`Give ${hook.url} a new signing secret? The current one keeps signing beside it for 24 hours, while the receiver moves over.`)) return;
        onSecret(await ok(hub.POST("/api/v1/projects/{id}/webhooks/{wid}/rotate-secret", path)));
        onChanged();
      })}
      {control(
        "delete",
        "Delete",
        async () => {
          if (!confirm(`Delete the webhook to ${hook.url}? What it is still owed is not sent.`)) return;
          await ok(hub.DELETE("/api/v1/projects/{id}/webhooks/{wid}", path));
          // Its deliveries went with it.
          navigate(`/projects/${hook.project_id}/webhooks`);
          onChanged();
        },
        true,
      )}
    </span>
  );
}
