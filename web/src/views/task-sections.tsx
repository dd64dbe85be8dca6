/** The sections of a task's page that show what it holds: its request, structured spec and result. */
import type { Task } from "../types";

export const json = (value: unknown) => JSON.stringify(value, null, 2);

export function Section({ title, children }: { title: string; children: preact.ComponentChildren }) {
  return (
    <section class="task-section">
      <h3>{title}</h3>
      {children}
    </section>
  );
}

/** What a task-format request sent beside the hub's fields: its id, input and blocks. */
export function TaskFormatRequest({ task }: { task: Task }) {
  const blocks = { payload: task.payload, context: task.context, routing: task.routing, extensions: task.extensions };
  return (
    <Section title="Task-format request">
      <p>
        Client id: <code>{task.client_id}</code>
      </p>
      {Object.entries(blocks).map(([name, value]) =>
        value == null ? null : (
          <>
            <h4>{name}</h4>
            <pre class="json">{json(value)}</pre>
          </>
        ),
      )}
    </Section>
  );
}

export function StructuredSpec({ spec }: { spec: Record<string, unknown> }) {
  const requirements = (spec.requirements as { id?: string; description?: string; priority?: string }[] | undefined) ?? [];
  const rest = Object.fromEntries(Object.entries(spec).filter(([k]) => k !== "requirements"));
  return (
    <Section title="Structured spec">
      {requirements.length > 0 && (
        <ul class="requirements">
          {requirements.map((r) => (
            <li>
              <span class={`badge moscow moscow-${String(r.priority ?? "").toLowerCase()}`}>{r.priority ?? "?"}</span> {r.id && <code>{r.id}</code>}{" "}
              {r.description}
            </li>
          ))}
        </ul>
      )}
      {Object.keys(rest).length > 0 && <pre class="json">{json(rest)}</pre>}
    </Section>
  );
}

export function Result({ result }: { result: Record<string, unknown> }) {
  const contracts = (result.contracts as Record<string, { data?: unknown; status?: string }> | undefined) ?? {};
  return (
    <Section title="Result">
      {typeof result.summary === "string" && <p>{result.summary}</p>}
      {typeof result.error === "string" && <p class="problem">{result.error}</p>}
      {result.tests != null && (
        <>
          <h4>Tests</h4>
          <pre class="json">{json(result.tests)}</pre>
        </>
      )}
      {result.changes != null && (
        <>
          <h4>Changes</h4>
          <pre class="json">{json(result.changes)}</pre>
        </>
      )}
      {Object.entries(contracts).map(([key, c]) => {
        const ref = c?.data as { $dataref?: string; url?: string; size?: number } | undefined;
        return (
          <div class="contract">
            <h4>
              {key} {c?.status && <span class="muted">({c.status})</span>}
            </h4>
            {ref?.$dataref ? (
              <a href={ref.url} rel="noopener">
                DataRef {ref.$dataref.slice(0, 8)} ({ref.size} bytes)
              </a>
            ) : (
              <pre class="json">{json(c?.data)}</pre>
            )}
          </div>
        );
      })}
      <details>
        <summary>Whole result</summary>
        <pre class="json">{json(result)}</pre>
      </details>
    </Section>
  );
}

const REQUIREMENT_LABELS: Record<string, string> = {
  repo: "Repository",
  languages: "Languages",
  environments: "Environments",
  tools: "Tools",
  tags: "Tags",
  prefer_server: "Preferred server",
};

/** What a server must (or should) offer to be given the task, as requirements/v1 says it. */
export function Requirements({ requirements }: { requirements: Record<string, unknown> }) {
  const entries = Object.entries(requirements).filter(([k]) => k !== "$schema");
  return (
    <Section title="Requirements">
      <dl class="facts requirements-list">
        {entries.map(([key, value]) => (
          <>
            <dt>{REQUIREMENT_LABELS[key] ?? key}</dt>
            <dd>{Array.isArray(value) ? value.join(", ") : typeof value === "object" ? json(value) : String(value)}</dd>
          </>
        ))}
      </dl>
    </Section>
  );
}
