/**
 * Setting up or changing a schedule: the template it runs and that template's parameters as a typed form, the cron
 * expression with a live reading of it in words, the time zone it is read in (the browser's own offered first), and
 * what to do with a missed slot and with a run while the previous one is open. Refusals land beside their fields.
 */
import { useState } from "preact/hooks";
import { changeSchedule, createSchedule, type Schedule } from "../automation-api";
import { parameterValues, typedDefaults, type Template } from "../template-draft";
import { Problem } from "./controls";
import { useCronWords } from "./cron-words";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";
import { ParameterInputs } from "./run-dialog";
import { NameField, TemplateField } from "./template-field";

export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** Every IANA zone the browser knows, the browser's own and UTC first. */
function zones(current: string): string[] {
  const all = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return [...new Set([current, browserZone(), "UTC", ...all])];
}

const EXAMPLES = [
  ["0 2 * * *", "every night at 02:00"],
  ["0 9 * * 1-5", "weekdays at 09:00"],
  ["*/30 * * * *", "every 30 minutes"],
  ["@weekly", "Sundays at 00:00"],
] as const;

export function ScheduleForm(props: { projectId: string; templates: Template[]; schedule?: Schedule; onSaved: (s: Schedule) => void; onCancel: () => void }) {
  const s = props.schedule;
  const [templateId, setTemplateId] = useState(s?.template_id ?? props.templates[0]?.id ?? "");
  const template = props.templates.find((t) => t.id === templateId);
  const [name, setName] = useState(s?.name ?? "");
  const [cron, setCron] = useState(s?.cron ?? "0 2 * * *");
  const [timezone, setTimezone] = useState(s?.timezone ?? browserZone());
  const [missed, setMissed] = useState<Schedule["missed"]>(s?.missed ?? "skip");
  const [overlap, setOverlap] = useState<Schedule["overlap"]>(s?.overlap ?? "skip");
  const [values, setValues] = useState(() => typedDefaults(template?.parameters ?? [], s?.parameters));
  const [refusal, setRefusal] = useState<Refusal<string> | null>(null);
  const [busy, setBusy] = useState(false);
  const words = useCronWords(cron);
  const problems = refusal?.fields ?? {};
  const known = [
    "template_id",
    "name",
    "cron",
    "timezone",
    "missed",
    "overlap",
    "parameters",
    ...(template?.parameters ?? []).map((p) => `parameters.${p.name}`),
  ];

  const pickTemplate = (id: string) => {
    setTemplateId(id);
    setValues(typedDefaults(props.templates.find((t) => t.id === id)?.parameters ?? []));
  };
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    const body = {
      template_id: templateId,
      name: name.trim() || null,
      cron: cron.trim(),
      timezone,
      parameters: parameterValues(template?.parameters ?? [], values),
      missed,
      overlap,
    };
    try {
      props.onSaved(s ? await changeSchedule(props.projectId, s.id, body) : await createSchedule(props.projectId, body));
    } catch (err) {
      setRefusal(refusalOf(err, known));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="schedule-form panel" onSubmit={(e) => void save(e)} aria-labelledby="schedule-form-title" noValidate>
      <h3 id="schedule-form-title">{s ? `Change the schedule ${s.name ?? ""}` : "New schedule"}</h3>
      <div class="form-grid">
        <TemplateField templates={props.templates} value={templateId} onPick={pickTemplate} problem={problems["template_id"]} />
        <NameField value={name} onInput={setName} example="Nightly" problem={problems["name"]} />
        <label>
          Cron expression
          <input
            name="cron"
            class="mono"
            value={cron}
            required
            autoComplete="off"
            spellcheck={false}
            aria-describedby="cron-words"
            onInput={(e) => setCron(e.currentTarget.value)}
          />
          <span id="cron-words" class="cron-preview" aria-live="polite">
            {words.words ?? (words.unreadable ? "Not read as a cron expression here: the hub will say what it makes of it." : "")}
          </span>
          <FieldProblem field="cron" message={problems["cron"]} />
        </label>
        <label>
          Time zone
          <select name="timezone" value={timezone} onChange={(e) => setTimezone(e.currentTarget.value)}>
            {zones(timezone).map((z) => (
              <option key={z} value={z}>
                {z === browserZone() ? `${z} (yours)` : z}
              </option>
            ))}
          </select>
          <FieldProblem field="timezone" message={problems["timezone"]} />
        </label>
      </div>
      <p class="muted small">
        Five fields: minute, hour, day of the month, month, day of the week; or <code>@daily</code>, <code>@weekly</code>… For example{" "}
        {EXAMPLES.map(([x, what], i) => (
          <span key={x}>
            {i > 0 && ", "}
            <button type="button" class="link" onClick={() => setCron(x)}>
              <code>{x}</code>
            </button>{" "}
            ({what})
          </span>
        ))}
        .
      </p>
      <fieldset class="policies">
        <legend>When a slot is missed (the hub woke more than five minutes late)</legend>
        <label class="switch">
          <input type="radio" name="missed" checked={missed === "skip"} onChange={() => setMissed("skip")} /> skip it
        </label>
        <label class="switch">
          <input type="radio" name="missed" checked={missed === "run_once"} onChange={() => setMissed("run_once")} /> run it once, late
        </label>
        <FieldProblem field="missed" message={problems["missed"]} />
      </fieldset>
      <fieldset class="policies">
        <legend>When the previous run still has a task not finished</legend>
        <label class="switch">
          <input type="radio" name="overlap" checked={overlap === "skip"} onChange={() => setOverlap("skip")} /> skip this slot
        </label>
        <label class="switch">
          <input type="radio" name="overlap" checked={overlap === "allow"} onChange={() => setOverlap("allow")} /> run anyway
        </label>
        <FieldProblem field="overlap" message={problems["overlap"]} />
      </fieldset>
      <fieldset class="policies">
        <legend>Parameters of each run</legend>
        <ParameterInputs parameters={template?.parameters ?? []} values={values} problems={problems} onChange={setValues} />
      </fieldset>
      <Problem message={problems["parameters"] ?? refusal?.other} />
      <div class="dialog-buttons">
        <button type="submit" disabled={busy || !templateId} aria-busy={busy}>
          {s ? "Save schedule" : "Add schedule"}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
