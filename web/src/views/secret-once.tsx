/** A secret right after it was made (a webhook's signing secret, an invite link): the hub keeps only a digest or a sealed copy, and never shows it again. */
import type { ComponentChildren } from "preact";
import { CopyButton } from "./copy";
import { absoluteTime } from "../time-format";

export interface ShownSecret {
  webhookId: string;
  url: string;
  secret: string;
  previousUntil: string | null;
}

/** The panel any shown-once value sits in: the value to select, a Copy button, and one to put it away. */
export function ShownOnce(props: {
  title: string;
  children: ComponentChildren;
  label: string;
  name: string;
  value: string;
  onDone: () => void;
  attributes?: Record<string, string>;
}) {
  return (
    <section class="panel secret-once" role="status" aria-labelledby={`${props.name}-title`} {...props.attributes}>
      <h2 id={`${props.name}-title`}>{props.title}</h2>
      <p>{props.children}</p>
      <div class="command">
        <label>
          {props.label}
          <input name={props.name} readOnly value={props.value} onFocus={(e) => e.currentTarget.select()} size={56} />
        </label>
        <CopyButton text={props.value} />
        <button type="button" class="secondary" onClick={props.onDone}>
          I have copied it
        </button>
      </div>
    </section>
  );
}

export function SecretOnce({ shown, onDone }: { shown: ShownSecret; onDone: () => void }) {
  return (
    <ShownOnce
      title={`Signing secret for ${shown.url}`}
      label="Secret"
      name="webhook-secret"
      value={shown.secret}
      onDone={onDone}
      attributes={{ "data-webhook-id": shown.webhookId }}
    >
      <strong>Shown once.</strong> Copy it into the receiver now: the hub keeps it sealed and cannot show it again (rotate the secret if it is lost).
      {shown.previousUntil && <> The previous secret keeps signing beside it until {absoluteTime(shown.previousUntil)}.</>}
    </ShownOnce>
  );
}
