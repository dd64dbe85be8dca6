/** Copying a value the person will paste elsewhere (a secret, a command): a button that says whether it worked. */
import { useState } from "preact/hooks";

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  const copy = () =>
    void (navigator.clipboard?.writeText(text) ?? Promise.reject()).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>
      {copied !== null && (
        <span class={copied ? "muted" : "problem"} role="status">
          {copied ? "Copied" : "The browser did not allow copying: select the text and copy it by hand."}
        </span>
      )}
    </>
  );
}

/** Characters a line of the widest box shows: a longer value wraps over more rows, so all of it can be read. */
const ROW_CHARS = 100;

/** A line to copy: read-only, selected whole when focused, with its Copy button. */
export function CopyLine({ label, value, name }: { label: string; value: string; name?: string }) {
  const select = (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) => e.currentTarget.select();
  return (
    <div class="command copy-line">
      <label>
        {label}
        {value.length > ROW_CHARS ? (
          <textarea name={name} readOnly value={value} onFocus={select} spellcheck={false} rows={Math.ceil(value.length / ROW_CHARS)} />
        ) : (
          <input name={name} readOnly value={value} onFocus={select} spellcheck={false} />
        )}
      </label>
      <CopyButton text={value} />
    </div>
  );
}
