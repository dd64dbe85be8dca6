/** Adding a webhook to a project: where to post, which events, what it is for. */
import { useState } from "preact/hooks";
import { hub, ok } from "../api";
import type { WebhookWithSecret } from "../types";
import { toast } from "../ui/toasts";
import { useAction } from "./controls";
import { EventPicker, type EventChoice } from "./event-picker";

interface Draft {
  url: string;
  events: EventChoice;
  description: string;
}

const EMPTY: Draft = { url: "", events: null, description: "" };

export function NewWebhook({ projectId, onCreated }: { projectId: string; onCreated: (hook: WebhookWithSecret) => void }) {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const { run, busy, problem } = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void run("create", async () => {
      const hook = await ok(
        hub.POST("/api/v1/projects/{id}/webhooks", {
          params: { path: { id: projectId } },
          body: { url: draft.url.trim(), events: draft.events, ...(draft.description.trim() ? { description: draft.description.trim() } : {}) },
        }),
      );
      setDraft(EMPTY);
      toast(`Added a webhook to ${hook.url}.`);
      onCreated(hook);
    });
  };
  return (
    <section class="panel new-webhook">
      <h2>Add a webhook</h2>
      <form class="form-row" onSubmit={create}>
        <label class="grow">
          URL
          {/* Not type=url: the hub's own check names what is wrong with an address. */}
          <input
            name="webhook-url"
            required
            maxLength={2048}
            inputMode="url"
            placeholder="https://example.com/hooks/orchestratia"
            value={draft.url}
            onInput={(e) => setDraft({ ...draft, url: e.currentTarget.value })}
          />
        </label>
        <EventPicker value={draft.events} onChange={(events) => setDraft({ ...draft, events })} />
        <label class="grow">
          Description
          <input
            name="webhook-description"
            maxLength={500}
            placeholder="optional"
            value={draft.description}
            onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })}
          />
        </label>
        <button type="submit" disabled={busy !== null} aria-busy={busy !== null}>
          Add webhook
        </button>
        {problem("create")}
      </form>
    </section>
  );
}
