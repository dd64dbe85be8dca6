/** Notes left on a task, for its agent (and, when asked, the agents of the tasks that depend on it). */
import { z } from "zod";
import { notesOf } from "../views/task-queries";
import { readJson } from "../http/body";
import { noteBody } from "../protocol/hub-api";
import { runInRoom } from "../room/client";
import { noteSchema, noteView, type NoteRow } from "../views/tasks";
import type { TaskSurface } from "./task-surface";
import { taskFor } from "./task-access";
import { readableTask } from "./archived-tasks";
import { archivedNotes } from "../archive/reads";

/** POST and GET /:id/notes. */
export function noteRoutes({ r, describe, read, write, taskId }: TaskSurface) {
  r.post(
    "/:id/notes",
    describe({
      id: "addTaskNote",
      summary: "Add a note",
      description:
        "Leave a note on the task.\n\n" +
        "By anyone who may write to the project, in any status. The note reaches the task's agent (event `note_added`), and its envelope's `prior_context`. " +
        "With `notify_dependents`, the sessions working on the unfinished tasks that depend on it (`blocks` or `input`) are sent it as " +
        '`note_for_session` with `mentioned_via: "dependency"`, as they are when the task completes.',
      body: noteBody,
      responses: { 201: noteSchema },
    }),
    write,
    async (c) => {
      const task = await taskFor(c, taskId(c), "write");
      const body = await readJson(c, noteBody);
      const { data } = await runInRoom(c, task.projectId, {
        op: "note",
        taskId: task.id,
        content: body.content,
        urgent: body.urgent,
        notifyDependents: body.notify_dependents,
      });
      // The room answers the note it wrote, so the answer costs no read.
      return c.json(noteView(data!.note as NoteRow), 201);
    },
  );
  r.get(
    "/:id/notes",
    describe({ id: "listTaskNotes", summary: "List notes", description: "The task's notes, oldest first.", responses: { 200: z.array(noteSchema) } }),
    read,
    async (c) => {
      const task = await readableTask(c, taskId(c), () => taskFor(c, taskId(c)));
      const notes = task.archived ? await archivedNotes(c.env.BLOBS, task.archived) : await notesOf(c.var.db, task.id);
      return c.json(notes.map(noteView));
    },
  );
}
