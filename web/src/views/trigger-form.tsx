/**
 * Adding an inbound trigger: the template it runs, plain HTTP or a GitHub repository webhook, fixed parameters, and for
 * GitHub the events that fire it (a label, a comment command) and which field of the event fills each parameter.
 */
import { useState } from "preact/hooks";
import { createTrigger, type GithubEvent, type TriggerWithSecret } from "../automation-api";
import { parameterValues, type Template } from "../template-draft";
import { Problem } from "./controls";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";
import { ParameterInputs } from "./run-dialog";
import { NameField, TemplateField } from "./template-field";

export const GITHUB_EVENTS: { value: GithubEvent; label: string; tick: string }[] = [
  { value: "issues.labeled", label: "an issue is labelled", tick: "Issues" },
  { value: "issue_comment.created", label: "someone comments on an issue or pull request", tick: "Issue comments" },
  { value: "pull_request.opened", label: "a pull request is opened", tick: "Pull requests" },
];

/** Fields of GitHub's event payloads worth mapping, offered as the person types a path. */
const PATHS = [
  "issue.title",
  "issue.body",
  "issue.html_url",
  "issue.number",
  "comment.body",
  "pull_request.title",
  "pull_request.body",
  "pull_request.html_url",
  "pull_request.number",
  "pull_request.head.ref",
  "sender.login",
  "repository.full_name",
];

interface Mapping {
  parameter: string;
  path: string;
}

export function TriggerForm(props: { projectId: string; templates: Template[]; onCreated: (t: TriggerWithSecret) => void; onCancel: () => void }) {
  const [templateId, setTemplateId] = useState(props.templates[0]?.id ?? "");
  const template = props.templates.find((t) => t.id === templateId);
  const params = template?.parameters ?? [];
  const [name, setName] = useState("");
  const [kind, setKind] = useState<"http" | "github">("github");
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [events, setEvents] = useState<GithubEvent[]>(["issues.labeled"]);
  const [label, setLabel] = useState("");
  const [command, setCommand] = useState("");
  const [mapping, setMapping] = useState<Mapping[]>([]);
  const [refusal, setRefusal] = useState<Refusal<string> | null>(null);
  const [busy, setBusy] = useState(false);
  const problems = refusal?.fields ?? {};
  const known = [
    "template_id",
    "name",
    "kind",
    "parameters",
    ...params.map((p) => `parameters.${p.name}`),
    "github",
    "github.events",
    "github.label",
    "github.command",
    "github.mapping",
    ...mapping.map((m) => `github.mapping.${m.parameter}`),
  ];

  const pickTemplate = (id: string) => {
    setTemplateId(id);
    setValues({});
    setMapping([]);
  };
  const setRow = (i: number, change: Partial<Mapping>) => setMapping(mapping.map((m, j) => (j === i ? { ...m, ...change } : m)));
  const unmapped = params.find((p) => !mapping.some((m) => m.parameter === p.name));

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    try {
      const made = await createTrigger(props.projectId, {
        template_id: templateId,
        name: name.trim() || null,
        kind,
        parameters: parameterValues(params, values),
        github:
          kind === "github"
            ? {
                events,
                label: label.trim() || null,
                command: command.trim() || null,
                mapping: Object.fromEntries(mapping.filter((m) => m.path.trim()).map((m) => [m.parameter, m.path.trim()])),
              }
            : null,
      });
      props.onCreated(made);
    } catch (err) {
      setRefusal(refusalOf(err, known));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="trigger-form panel" onSubmit={(e) => void create(e)} aria-labelledby="trigger-form-title" noValidate>
      <h3 id="trigger-form-title">New trigger</h3>
      <div class="form-grid">
        <TemplateField templates={props.templates} value={templateId} onPick={pickTemplate} problem={problems["template_id"]} />
        <NameField value={name} onInput={setName} example="Labelled issues" problem={problems["name"]} />
      </div>
      <fieldset class="policies">
        <legend>Called by</legend>
        <label class="switch">
          <input type="radio" name="kind" checked={kind === "github"} onChange={() => setKind("github")} /> a GitHub repository's webhook
        </label>
        <label class="switch">
          <input type="radio" name="kind" checked={kind === "http"} onChange={() => setKind("http")} /> any system, over HTTP (a bearer secret or Standard
          Webhooks signature)
        </label>
        <FieldProblem field="kind" message={problems["kind"]} />
      </fieldset>
      {kind === "github" && (
        <>
          <fieldset class="policies">
            <legend>Runs when</legend>
            {GITHUB_EVENTS.map((ev) => (
              <label class="switch" key={ev.value}>
                <input
                  type="checkbox"
                  name={`event-${ev.value}`}
                  checked={events.includes(ev.value)}
                  onChange={(e) => setEvents(e.currentTarget.checked ? [...events, ev.value] : events.filter((x) => x !== ev.value))}
                />{" "}
                {ev.label} <code class="small">{ev.value}</code>
              </label>
            ))}
            <FieldProblem field="github.events" message={problems["github.events"] ?? problems["github"]} />
          </fieldset>
          <div class="form-grid">
            {events.includes("issues.labeled") && (
              <label>
                Only the label
                <input name="github.label" value={label} placeholder="any label" onInput={(e) => setLabel(e.currentTarget.value)} />
                <FieldProblem field="github.label" message={problems["github.label"]} />
              </label>
            )}
            {events.includes("issue_comment.created") && (
              <label>
                Only comments starting with
                <input name="github.command" value={command} placeholder="/agent" onInput={(e) => setCommand(e.currentTarget.value)} />
                <FieldProblem field="github.command" message={problems["github.command"]} />
              </label>
            )}
          </div>
          <fieldset class="policies mapping">
            <legend>Parameters from the event</legend>
            {params.length === 0 && <p class="muted small">The template has no parameters to fill in.</p>}
            {mapping.map((m, i) => (
              <div class="dependency-row" key={i}>
                <label>
                  Parameter
                  <select name={`mapping-${i}-parameter`} value={m.parameter} onChange={(e) => setRow(i, { parameter: e.currentTarget.value })}>
                    {params.map((p) => (
                      <option key={p.name}>{p.name}</option>
                    ))}
                  </select>
                </label>
                <label class="grow">
                  From the event's
                  <input
                    name={`mapping-${i}-path`}
                    class="mono"
                    list="github-paths"
                    value={m.path}
                    placeholder="issue.title"
                    onInput={(e) => setRow(i, { path: e.currentTarget.value })}
                  />
                  <FieldProblem field={`github.mapping.${m.parameter}`} message={problems[`github.mapping.${m.parameter}`]} />
                </label>
                <button type="button" class="secondary" onClick={() => setMapping(mapping.filter((_, j) => j !== i))}>
                  Remove
                </button>
              </div>
            ))}
            <datalist id="github-paths">
              {PATHS.map((p) => (
                <option key={p} value={p} />
              ))}
            </datalist>
            {unmapped && (
              <button type="button" class="secondary" onClick={() => setMapping([...mapping, { parameter: unmapped.name, path: "" }])}>
                Map a parameter
              </button>
            )}
            <FieldProblem field="github.mapping" message={problems["github.mapping"]} />
          </fieldset>
        </>
      )}
      {params.length > 0 && (
        <fieldset class="policies">
          <legend>{kind === "github" ? "Fixed parameters (the event's fields take precedence)" : "Fixed parameters (the call's take precedence)"}</legend>
          <ParameterInputs parameters={params.map((p) => ({ ...p, required: false }))} values={values} problems={problems} onChange={setValues} />
        </fieldset>
      )}
      <Problem message={problems["parameters"] ?? problems["github"] ?? refusal?.other} />
      <div class="dialog-buttons">
        <button type="submit" disabled={busy || !templateId} aria-busy={busy}>
          Add trigger
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
