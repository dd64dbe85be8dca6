/** What waits for a person across their projects: open questions and plans to review, answerable here. */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { useCanWrite } from "../me";
import { linkProps } from "../router";
import { tasksOf, type Intervention, type Task } from "../types";
import { useAction } from "./controls";

const REFRESH_MS = 10_000;

export function Inbox() {
  const canWrite = useCanWrite();
  const [questions, setQuestions] = useState<Intervention[] | null>(null);
  const [plans, setPlans] = useState<Task[]>([]);
  const [drafts, setDrafts] = useState<Record<string, string>>({});

  const load = async () => {
    const [open, review] = await Promise.all([
      ok(hub.GET("/api/v1/interventions", { params: { query: { status: "pending" } } })),
      ok(hub.GET("/api/v1/tasks", { params: { query: { status: "plan_review", limit: 200 } } })),
    ]);
    setQuestions(open);
    setPlans(tasksOf(review));
  };
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  const { run, problem } = useAction();
  const act = (key: string, action: () => Promise<unknown>) =>
    run(key, async () => {
      await action();
      await load();
    });
  const draft = (key: string) => drafts[key] ?? "";

  return (
    <section>
      <h1>Inbox</h1>
      <h2>Questions</h2>
      {questions?.length === 0 && <p class="muted">No open questions.</p>}
      {questions?.map((i) => (
        <form
          class="intervention"
          key={i.id}
          onSubmit={(e) => {
            e.preventDefault();
            void act(i.id, () => ok(hub.POST("/api/v1/interventions/{id}/respond", { params: { path: { id: i.id } }, body: { response: draft(i.id) } })));
          }}
        >
          <p>
            <strong>{i.intervention_type}</strong> from {i.asked_by}
            {i.task_id && (
              <>
                {" "}
                on <a {...linkProps(`/projects/${i.project_id}/tasks/${i.task_id}`)}>task {i.task_id.slice(0, 8)}</a>
              </>
            )}
            : {i.question}
          </p>
          {canWrite && (
            <>
              <label>
                Answer
                <input required value={draft(i.id)} onInput={(e) => setDrafts({ ...drafts, [i.id]: e.currentTarget.value })} />
              </label>
              <button type="submit">Send answer</button>
              {problem(i.id)}
            </>
          )}
        </form>
      ))}
      <h2>Plans to review</h2>
      {plans.length === 0 && <p class="muted">No plans waiting.</p>}
      {plans.map((t) => (
        <article class="plan" key={t.id}>
          <h3>
            <a {...linkProps(`/projects/${t.project_id}/tasks/${t.id}`)}>{t.title}</a> <span class="muted">by {t.assigned_server_name}</span>
          </h3>
          <pre class="json">{typeof t.plan === "string" ? t.plan : JSON.stringify(t.plan, null, 2)}</pre>
          {canWrite && (
            <form
              class="inline"
              onSubmit={(e) => {
                e.preventDefault();
                void act(`revise-${t.id}`, () =>
                  ok(hub.POST("/api/v1/tasks/{id}/revise-plan", { params: { path: { id: t.id } }, body: { feedback: draft(t.id) } })),
                );
              }}
            >
              <button
                type="button"
                onClick={() => void act(`approve-${t.id}`, () => ok(hub.POST("/api/v1/tasks/{id}/approve-plan", { params: { path: { id: t.id } } })))}
              >
                Approve plan
              </button>
              {problem(`approve-${t.id}`)}
              <label>
                Changes to ask for
                <input required value={draft(t.id)} onInput={(e) => setDrafts({ ...drafts, [t.id]: e.currentTarget.value })} />
              </label>
              <button type="submit">Ask for changes</button>
              {problem(`revise-${t.id}`)}
            </form>
          )}
        </article>
      ))}
    </section>
  );
}
