/**
 * A project's archive setting: after how many days finished tasks (and the permission log and webhook deliveries) move
 * from the database to the archive. Blank is never. A refusal shows beside the field.
 */
import { useState } from "preact/hooks";
import { adoptStyles } from "../adopt-styles";
import type { Project } from "../types";
import { toast } from "../ui/toasts";
import { Problem } from "./controls";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";
import css from "./archive-settings.css" with { type: "text" };

adoptStyles(css as string);

type Field = "archive_after_days";
const typedOf = (days: number | null) => (days === null ? "" : String(days));

export function ArchiveSettings(props: { project: Project; isAdmin: boolean; save: (change: { archive_after_days: number | null }) => Promise<void> }) {
  const { isAdmin } = props;
  const [days, setDays] = useState(typedOf(props.project.settings.archive_after_days));
  const [refusal, setRefusal] = useState<Refusal<Field> | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    try {
      await props.save({ archive_after_days: days.trim() === "" ? null : Number(days) });
      toast("Archive setting saved.");
    } catch (err) {
      setRefusal(refusalOf(err, ["archive_after_days"], /^settings\./));
      toast("The archive setting was not changed.", "error");
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="archive-heading">
      <h2 id="archive-heading">Archive</h2>
      <form class="archive-setting" onSubmit={(e) => void submit(e)}>
        <p class="muted">
          Finished tasks older than this, with their events, notes and questions, move from the database to the project's archive, as do the permission log and
          finished webhook deliveries. Archived tasks still open by their link, marked archived; lists leave them out. Leave it blank to keep everything in the
          database.
        </p>
        <label>
          Archive after (days)
          <input
            name="archive-after-days"
            type="number"
            inputMode="numeric"
            placeholder="never"
            value={days}
            disabled={!isAdmin}
            onInput={(e) => setDays(e.currentTarget.value)}
          />
          <FieldProblem field="archive_after_days" message={refusal?.fields.archive_after_days} />
        </label>
        {isAdmin && (
          <button type="submit" disabled={busy} aria-busy={busy}>
            Save
          </button>
        )}
        {!isAdmin && <p class="muted small">Only admins change this.</p>}
        <Problem message={refusal?.other ?? null} />
      </form>
    </section>
  );
}
