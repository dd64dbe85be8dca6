/** A webhook's signing secret, right after it was made: the hub keeps it sealed and never shows it again. */
import { CopyButton } from "./copy";

export interface ShownSecret {
  webhookId: string;
  url: string;
  secret: string;
  /** Rotated: the previous secret keeps signing until then. */
  previousUntil: string | null;
}

export function SecretOnce({ shown, onDone }: { shown: ShownSecret; onDone: () => void }) {
  return (
    <section class="panel secret-once" role="status" aria-labelledby="secret-title" data-webhook-id={shown.webhookId}>
      <h2 id="secret-title">Signing secret for {shown.url}</h2>
      <p>
        <strong>Shown once.</strong> Copy it into the receiver now: the hub keeps it sealed and cannot show it again (rotate the secret if it is lost).
        {shown.previousUntil && <> The previous secret keeps signing beside it until {new Date(shown.previousUntil).toLocaleString()}.</>}
      </p>
      <div class="command">
        <label>
          Secret
          <input name="webhook-secret" readOnly value={shown.secret} onFocus={(e) => e.currentTarget.select()} size={56} />
        </label>
        <CopyButton text={shown.secret} />
        <button type="button" class="secondary" onClick={onDone}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
