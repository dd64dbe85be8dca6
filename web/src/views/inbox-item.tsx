/** One thing waiting on people, as the inbox shows it: what it is about, who asks and when, and its answer in place. */
import { useState } from "preact/hooks";
import type { Schemas } from "../../../client";
import { hub, ok } from "../api";
import { KIND_LABELS } from "../notifications";
import { linkProps } from "../router";
import { useAction } from "./controls";
import { When } from "./when";
import { absoluteTime } from "../time-format";

type InboxItem = Schemas["InboxItem"];

/** The answers an approval takes, as the hub's other surfaces (Telegram) send them. */
const APPROVED = "approved";
const REJECTED = "rejected";

const json = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));

function asker(item: InboxItem) {
  const { session, server, label } = item.asked_by;
  if (session && server) return `${session.name} on ${server.name}`;
  return session?.name ?? server?.name ?? label.replace(/^agent:/, "");
}

export function InboxEntry({ item, fresh, focused, onDone }: { item: InboxItem; fresh: boolean; focused: boolean; onDone: () => Promise<void> }) {
  const taskPath = item.task && `/projects/${item.project.id}/tasks/${item.task.id}`;
  return (
    <article class={`inbox-item kind-${item.kind}${fresh ? " fresh" : ""}${focused ? " focused" : ""}`} id={`item-${item.id}`} data-item-id={item.id}>
      <header>
        <span class="badge kind">{KIND_LABELS[item.kind]}</span>
        {fresh && <span class="badge new">new</span>}
        <h3>{taskPath ? <a {...linkProps(taskPath)}>{item.task!.title}</a> : <span class="muted">Not about a task</span>}</h3>
        <When iso={item.asked_at} />
      </header>
      <p class="meta muted">
        <a {...linkProps(`/projects/${item.project.id}`)}>{item.project.name}</a>
        <span>
          {item.kind === "task_approval" ? "created by" : "asked by"} {asker(item)}
        </span>
        {item.expires_at && (
          <span>
            waits until <time dateTime={item.expires_at}>{absoluteTime(item.expires_at)}</time>
          </span>
        )}
      </p>
      {item.question !== null && <p class="question">{item.question}</p>}
      {item.context !== null && (
        <details class="context">
          <summary>What the agent sent with it</summary>
          <pre class="json">{json(item.context)}</pre>
        </details>
      )}
      {item.plan !== null && <pre class="json plan-text">{json(item.plan)}</pre>}
      {item.spec !== null && item.spec !== "" && <pre class="spec">{item.spec}</pre>}
      {item.can_answer ? <Answer item={item} onDone={onDone} /> : <p class="muted small">You can read this project, not answer in it.</p>}
    </article>
  );
}

/** The controls that answer an item, by its kind. */
function Answer({ item, onDone }: { item: InboxItem; onDone: () => Promise<void> }) {
  const [text, setText] = useState("");
  const { run, busy, problem } = useAction();
  const act = (key: string, action: () => Promise<unknown>) =>
    run(key, async () => {
      await action();
      await onDone();
    });
  const path = { params: { path: { id: item.id } } };
  const respond = (key: string, response: string) => act(key, () => ok(hub.POST("/api/v1/interventions/{id}/respond", { ...path, body: { response } })));
  const button = (key: string, label: string, action: () => void, danger = false) => (
    <button key={key} type="button" class={danger ? "danger" : undefined} disabled={busy !== null} onClick={action}>
      {label}
    </button>
  );

  if (item.kind === "approval") {
    return (
      <div class="answer">
        {button("approve", "Approve", () => void respond("approve", APPROVED))}
        {button("reject", "Reject", () => void respond("reject", REJECTED), true)}
        {problem("approve")}
        {problem("reject")}
      </div>
    );
  }
  if (item.kind === "task_approval") {
    return (
      <div class="answer">
        {button("approve", "Approve", () => void act("approve", () => ok(hub.POST("/api/v1/tasks/{id}/approve", path))))}
        {button(
          "reject",
          "Reject",
          () => void act("reject", () => ok(hub.DELETE("/api/v1/tasks/{id}", { ...path, body: { reason: "Rejected in the inbox" } }))),
          true,
        )}
        {problem("approve")}
        {problem("reject")}
      </div>
    );
  }
  const plan = item.kind === "plan_review";
  return (
    <form
      class="answer"
      onSubmit={(e) => {
        e.preventDefault();
        void (plan ? act("text", () => ok(hub.POST("/api/v1/tasks/{id}/revise-plan", { ...path, body: { feedback: text } }))) : respond("text", text));
      }}
    >
      {plan && button("approve", "Approve plan", () => void act("approve", () => ok(hub.POST("/api/v1/tasks/{id}/approve-plan", path))))}
      {item.options.map((option, i) => button(`option-${i}`, option, () => void respond(`option-${i}`, option)))}
      <label>
        {plan ? "Changes to ask for" : "Answer"}
        <input required value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy !== null}>
        {plan ? "Ask for changes" : "Send answer"}
      </button>
      {problem("approve")}
      {problem("text")}
      {item.options.map((_, i) => problem(`option-${i}`))}
    </form>
  );
}
