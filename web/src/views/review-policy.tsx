/**
 * A project's code-review policy on its Settings page: whether completions are reviewed, by whom (an agent tagged for
 * it, or a model endpoint whose key is kept sealed), the scores and retries, and which completions. Everyone who sees
 * the project reads it; admins change it. A refusal shows beside the field it names.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { adoptStyles } from "../adopt-styles";
import { hub, messageOf, ok } from "../api";
import { bodyOf, draftOf, POLICY_FIELDS, PRIORITIES, type PolicyDraft, type PolicyField } from "../review-policy-draft";
import type { ReviewPolicy } from "../types";
import { Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { Problem } from "./controls";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";
import css from "./review-policy.css" with { type: "text" };

adoptStyles(css as string);

/** `remoteExec`: whether the project lets agents run commands in each other's sessions, which a model reviewer needs. */
export function ReviewPolicyPanel({ projectId, isAdmin, remoteExec }: { projectId: string; isAdmin: boolean; remoteExec: boolean }) {
  const [policy, setPolicy] = useState<ReviewPolicy | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    void ok(hub.GET("/api/v1/projects/{id}/review-policy", { params: { path: { id: projectId } } })).then(
      (p) => (setPolicy(p), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(load, [projectId]);
  return (
    <section class="panel review-policy" aria-labelledby="review-policy-heading">
      <h2 id="review-policy-heading">Code review</h2>
      <p class="muted">
        When this is on, a completion whose commit changed code is reviewed before the loop lets go of it: the task is done at once (its dependents go on), and
        a review below the pass score is typed into its worker's session as a fix request; the worker's next completion is the next attempt.
      </p>
      {!policy && (error ? <Failed what="the review policy" message={error} retry={load} /> : <Loading what="the review policy" />)}
      {policy && <PolicyForm projectId={projectId} policy={policy} isAdmin={isAdmin} remoteExec={remoteExec} onSaved={setPolicy} />}
      {!isAdmin && <p class="muted small">Only admins change this.</p>}
    </section>
  );
}

function PolicyForm(props: { projectId: string; policy: ReviewPolicy; isAdmin: boolean; remoteExec: boolean; onSaved: (p: ReviewPolicy) => void }) {
  const { isAdmin, policy } = props;
  const [draft, setDraft] = useState<PolicyDraft>(() => draftOf(policy));
  const [refusal, setRefusal] = useState<Refusal<PolicyField> | null>(null);
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof PolicyDraft>(key: K, value: PolicyDraft[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const problem = (f: PolicyField) => <FieldProblem field={f} message={refusal?.fields[f]} />;
  const text = (key: keyof PolicyDraft) => ({
    value: draft[key] as string,
    disabled: !isAdmin,
    onInput: (e: Event) => set(key, (e.currentTarget as HTMLInputElement).value as never),
  });
  /** A select's binding: its value in the draft, changed by admins only. */
  const choice = (key: "kind" | "apiStyle" | "onFinalFailure") => ({
    value: draft[key],
    disabled: !isAdmin,
    onChange: (e: Event) => set(key, (e.currentTarget as HTMLSelectElement).value as never),
  });

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    try {
      const saved = await ok(hub.PUT("/api/v1/projects/{id}/review-policy", { params: { path: { id: props.projectId } }, body: bodyOf(draft) }));
      props.onSaved(saved);
      setDraft(draftOf(saved));
      toast("Review policy saved.");
    } catch (err) {
      setRefusal(refusalOf(err, POLICY_FIELDS));
      toast("The review policy was not changed.", "error");
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="review-policy-form" aria-label="Code review policy" onSubmit={(e) => void submit(e)}>
      <label class="switch">
        <input type="checkbox" name="review-enabled" checked={draft.enabled} disabled={!isAdmin} onChange={(e) => set("enabled", e.currentTarget.checked)} />
        Review agents' code changes
        {problem("enabled")}
      </label>
      <fieldset>
        <legend>Reviewer</legend>
        <Field id="review-reviewer-kind" label="Reviewed by" problem={problem("reviewer.kind")}>
          <select id="review-reviewer-kind" name="reviewer-kind" {...choice("kind")}>
            <option value="agent">an agent (a review task)</option>
            <option value="model">a model endpoint</option>
          </select>
        </Field>
        {draft.kind === "agent" ? (
          <Field
            id="review-reviewer-capability"
            label="Capability tag"
            problem={problem("reviewer.capability")}
            hint="The review task goes to a server declaring this tag that holds the repository."
          >
            <input
              id="review-reviewer-capability"
              aria-describedby="review-reviewer-capability-hint"
              name="reviewer-capability"
              placeholder="code-review"
              {...text("capability")}
            />
          </Field>
        ) : (
          <>
            <Field id="review-reviewer-endpoint" label="Endpoint" problem={problem("reviewer.endpoint")} wide>
              <input
                id="review-reviewer-endpoint"
                name="reviewer-endpoint"
                type="url"
                placeholder="https://api.openai.com/v1/chat/completions"
                {...text("endpoint")}
              />
            </Field>
            <Field id="review-reviewer-api-style" label="API style" problem={problem("reviewer.api_style")}>
              <select id="review-reviewer-api-style" name="reviewer-api-style" {...choice("apiStyle")}>
                <option value="openai">OpenAI-compatible chat completions</option>
                <option value="anthropic">Anthropic Messages</option>
              </select>
            </Field>
            <Field id="review-reviewer-model" label="Model" problem={problem("reviewer.model")}>
              <input id="review-reviewer-model" name="reviewer-model" placeholder="gpt-4.1" {...text("model")} />
            </Field>
            <Field
              id="review-reviewer-api-key"
              label="API key"
              problem={problem("reviewer.api_key")}
              hint={policy.reviewer.has_api_key ? "A key is kept. Leave this empty to keep it." : "Kept sealed: it is never shown again."}
            >
              <input
                id="review-reviewer-api-key"
                aria-describedby="review-reviewer-api-key-hint"
                name="reviewer-api-key"
                type="password"
                autocomplete="off"
                placeholder={policy.reviewer.has_api_key ? "a key is kept" : ""}
                {...text("apiKey")}
              />
            </Field>
            <p class={`small hint ${props.remoteExec ? "muted" : "problem"}`} data-remote-exec={props.remoteExec ? "on" : "off"}>
              The model is sent the change as the worker's session shows it, which needs "Agents may run commands in each other's sessions" on
              {props.remoteExec ? " (it is)." : ": it is off."}
            </p>
          </>
        )}
      </fieldset>
      <fieldset>
        <legend>Scores and retries</legend>
        <Field id="review-pass-score" label="Pass score" problem={problem("pass_score")}>
          <input id="review-pass-score" name="pass-score" type="number" inputMode="numeric" min={0} max={100} {...text("passScore")} />
        </Field>
        <Field id="review-warn-score" label="Warn score" problem={problem("warn_score")}>
          <input id="review-warn-score" name="warn-score" type="number" inputMode="numeric" min={0} max={100} {...text("warnScore")} />
        </Field>
        <Field id="review-max-retries" label="Fixes asked (max retries)" problem={problem("max_retries")}>
          <input id="review-max-retries" name="max-retries" type="number" inputMode="numeric" min={0} max={10} {...text("maxRetries")} />
        </Field>
        <Field id="review-on-final-failure" label="When the last attempt fails" problem={problem("on_final_failure")}>
          <select id="review-on-final-failure" name="on-final-failure" {...choice("onFinalFailure")}>
            <option value="keep_done">keep it done, and tell people</option>
            <option value="needs_human">ask a person (needs a human)</option>
          </select>
        </Field>
        <p class="muted small hint">A warn (at least the warn score) is accepted on the last attempt.</p>
      </fieldset>
      <fieldset>
        <legend>What is reviewed</legend>
        <p class="muted small hint">Blank reviews every completion with a change; each criterion given must hold. Lists are comma-separated.</p>
        <Field id="review-match-types" label="Task types" problem={problem("match.types")}>
          <input id="review-match-types" name="match-types" placeholder="feature, bugfix" {...text("types")} />
        </Field>
        <Field id="review-match-tags" label="Tags" problem={problem("match.tags")}>
          <input id="review-match-tags" name="match-tags" placeholder="backend" {...text("tags")} />
        </Field>
        <Field id="review-match-paths" label="Path patterns" problem={problem("match.paths")} wide>
          <input id="review-match-paths" name="match-paths" placeholder="src/*, *.sql" {...text("paths")} />
        </Field>
        <Field id="review-match-min-lines" label="Minimum changed lines" problem={problem("match.min_lines")}>
          <input id="review-match-min-lines" name="match-min-lines" type="number" inputMode="numeric" min={0} placeholder="any" {...text("minLines")} />
        </Field>
        <div class="priorities" role="group" aria-label="Priorities">
          <span class="label">Priorities</span>
          {PRIORITIES.map((p) => (
            <label key={p} class="check">
              <input
                type="checkbox"
                name={`match-priority-${p}`}
                checked={draft.priorities.includes(p)}
                disabled={!isAdmin}
                onChange={(e) => set("priorities", e.currentTarget.checked ? [...draft.priorities, p] : draft.priorities.filter((x) => x !== p))}
              />
              {p}
            </label>
          ))}
          {problem("match.priorities")}
        </div>
      </fieldset>
      {isAdmin && (
        <button type="submit" disabled={busy} aria-busy={busy}>
          Save review policy
        </button>
      )}
      <Problem message={refusal?.other ?? null} />
    </form>
  );
}

/** A labelled control with its hint and its refusal beside it (outside the label, so the control's name is the label alone). */
function Field(props: { id: string; label: string; problem: ComponentChildren; hint?: string; wide?: boolean; children: ComponentChildren }) {
  return (
    <div class={props.wide ? "field wide" : "field"}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && (
        <span id={`${props.id}-hint`} class="muted small">
          {props.hint}
        </span>
      )}
      {props.problem}
    </div>
  );
}
