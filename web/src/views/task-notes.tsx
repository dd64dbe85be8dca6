/** A task's notes, and adding one (optionally for the sessions working on the tasks that depend on it). */
import { useState } from "preact/hooks";
import { hub, ok } from "../api";
import { useCanWrite } from "../me";
import type { Task } from "../types";
import { useAction } from "./controls";
import { Section } from "./task-sections";

export function Notes({ task }: { task: Task }) {
  const canWrite = useCanWrite();
  const [content, setContent] = useState("");
  const [toDependents, setToDependents] = useState(false);
  const { run, problem } = useAction();
  return (
    <Section title="Notes">
      <ul class="notes">
        {task.recent_notes.map((n) => (
          <li key={n.id}>
            <strong>{n.author}</strong> {n.urgent && <span class="badge blocked">urgent</span>} {n.content}
          </li>
        ))}
      </ul>
      {canWrite && !task.archived && (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void run("note", async () => {
              await ok(hub.POST("/api/v1/tasks/{id}/notes", { params: { path: { id: task.id } }, body: { content, notify_dependents: toDependents } }));
              setContent("");
              setToDependents(false);
            });
          }}
        >
          <label>
            Note
            <input name="note" required value={content} onInput={(e) => setContent(e.currentTarget.value)} />
          </label>
          <label class="switch">
            <input type="checkbox" name="notify-dependents" checked={toDependents} onChange={(e) => setToDependents(e.currentTarget.checked)} />
            Also tell the sessions working on the tasks that depend on this one
          </label>
          <button type="submit">Add note</button>
          {problem("note")}
        </form>
      )}
    </Section>
  );
}
