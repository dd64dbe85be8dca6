/**
 * A project's liveness rules (off by default): how long a running task may stay silent before it is raised as
 * stalled, and what that does; how long a waiting task no server can take may wait before it is flagged. A blank
 * number is off. A refusal shows beside the field it names.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { adoptStyles } from "../adopt-styles";
import type { Project } from "../types";
import { toast } from "../ui/toasts";
import { Problem } from "./controls";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";
import css from "./liveness-settings.css" with { type: "text" };

adoptStyles(css as string);

type Settings = Project["settings"];
export type LivenessChange = Partial<Pick<Settings, "stall_minutes" | "stall_action" | "unassignable_minutes">>;
type Field = keyof LivenessChange;
const FIELDS: Field[] = ["stall_minutes", "stall_action", "unassignable_minutes"];

/** A minutes field as typed: blank is off (null); anything else goes as a number, for the hub to check. */
const minutesOf = (typed: string) => (typed.trim() === "" ? null : Number(typed));
const typedOf = (minutes: number | null) => (minutes === null ? "" : String(minutes));

export function LivenessSettings(props: { settings: Settings; isAdmin: boolean; save: (change: LivenessChange) => Promise<void> }) {
  const { settings, isAdmin } = props;
  const [stall, setStall] = useState(typedOf(settings.stall_minutes));
  const [action, setAction] = useState(settings.stall_action);
  const [unassignable, setUnassignable] = useState(typedOf(settings.unassignable_minutes));
  const [refusal, setRefusal] = useState<Refusal<Field> | null>(null);
  const [busy, setBusy] = useState(false);
  const problem = (f: Field) => <FieldProblem field={f} message={refusal?.fields[f]} />;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    try {
      await props.save({ stall_minutes: minutesOf(stall), stall_action: action, unassignable_minutes: minutesOf(unassignable) });
      toast("Liveness rules saved.");
    } catch (err) {
      setRefusal(refusalOf(err, FIELDS, /^settings\./));
      toast("The liveness rules were not changed.", "error");
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="liveness-rules" onSubmit={(e) => void submit(e)} aria-labelledby="liveness-heading">
      <h3 id="liveness-heading">Silent and stuck tasks</h3>
      <p class="muted">
        A running task with no heartbeat from its server, no note and no progress for the minutes given is raised as stalled: an event, sent to webhooks and
        Telegram, once for each silence. A waiting task that no server can take by its requirements is flagged after its minutes, with each server's reason.
        Leave a field blank to turn its rule off.
      </p>
      <div class="liveness-fields">
        <MinutesField
          label="Stalled after (minutes)"
          name="stall-minutes"
          value={stall}
          onInput={setStall}
          disabled={!isAdmin}
          problem={problem("stall_minutes")}
        />
        <label>
          A stall
          <select name="stall-action" value={action} disabled={!isAdmin} onChange={(e) => setAction(e.currentTarget.value as Settings["stall_action"])}>
            <option value="alert">only alerts</option>
            <option value="needs_human">also moves the task to needs human</option>
          </select>
          {problem("stall_action")}
        </label>
        <MinutesField
          label="Unassignable after (minutes)"
          name="unassignable-minutes"
          value={unassignable}
          onInput={setUnassignable}
          disabled={!isAdmin}
          problem={problem("unassignable_minutes")}
        />
      </div>
      {isAdmin && (
        <button type="submit" disabled={busy} aria-busy={busy}>
          Save rules
        </button>
      )}
      <Problem message={refusal?.other ?? null} />
    </form>
  );
}

/** A rule's minutes: blank is off. */
function MinutesField(props: { label: string; name: string; value: string; onInput: (v: string) => void; disabled: boolean; problem: JSX.Element }) {
  return (
    <label>
      {props.label}
      <input
        name={props.name}
        type="number"
        inputMode="numeric"
        placeholder="off"
        value={props.value}
        disabled={props.disabled}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      {props.problem}
    </label>
  );
}
