/** A personal access token right after it was made: the hub keeps only its digest and never shows it again. */
import type { IssuedPersonalToken } from "../types";
import { CopyLine } from "./copy";
import { absoluteDate } from "../time-format";

export function TokenOnce({ issued, onDone }: { issued: IssuedPersonalToken; onDone?: () => void }) {
  return (
    <section class="panel secret-once token-once" role="status" aria-labelledby="token-once-title" data-token-id={issued.id}>
      <h2 id="token-once-title">Token “{issued.name}”</h2>
      <p>
        <strong>Shown once.</strong> Copy it into your client now: the hub keeps only a digest and cannot show it again (make another if it is lost). It works
        until {absoluteDate(issued.expires_at)}, {issued.scope === "read" ? "only to read" : "as you"}
        {issued.project_ids ? `, in ${issued.project_ids.length === 1 ? "one project" : `${issued.project_ids.length} projects`}` : ", in all your projects"}.
      </p>
      <CopyLine label="Token" name="personal-token" value={issued.token} />
      {onDone && (
        <button type="button" class="secondary done" onClick={onDone}>
          I have copied it
        </button>
      )}
    </section>
  );
}
