/** What can be done to one webhook: enabling or disabling it, a new secret, a test delivery, deleting it. */
import { hub, ok } from "../api";
import { navigate } from "../router";
import type { Webhook, WebhookWithSecret } from "../types";
import { toast } from "../ui/toasts";
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
  /** A button for one action; `act` answers what to confirm in a toast, or nothing when the person backed out. */
  const control = (key: string, label: string, act: () => Promise<string | undefined>, danger = false) => (
    <span class="action">
      <button
        type="button"
        class={danger ? "danger" : "secondary"}
        disabled={busy !== null}
        aria-busy={busy === key}
        aria-label={`${label} ${hook.url}`}
        onClick={() =>
          void run(key, async () => {
            const done = await act();
            if (done) toast(done);
          })
        }
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
        return `${hook.enabled ? "Disabled" : "Enabled"} the webhook to ${hook.url}.`;
      })}
      {control("test", "Send test", async () => {
        await ok(hub.POST("/api/v1/projects/{id}/webhooks/{wid}/test", path));
        navigate(`/projects/${hook.project_id}/webhooks/${hook.id}`);
        onTested();
        return "Test delivery queued: see it below.";
      })}
      {control("rotate", "Rotate secret", async () => {
        if (!confirm(`Give ${hook.url} a new signing secret? The current one keeps signing beside it for 24 hours, while the receiver moves over.`)) return;
        onSecret(await ok(hub.POST("/api/v1/projects/{id}/webhooks/{wid}/rotate-secret", path)));
        onChanged();
        return "New signing secret made: copy it now.";
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
          return `Deleted the webhook to ${hook.url}.`;
        },
        true,
      )}
    </span>
  );
}
