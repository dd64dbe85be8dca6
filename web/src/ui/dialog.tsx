/**
 * A modal dialog on the platform's own <dialog> (showModal traps focus, makes the rest of the page inert, and closes
 * on Escape): a title, a body, and the person's way out.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { X } from "lucide";
import { Icon } from "./icon";

let nextId = 0;

export function Dialog(props: { open: boolean; title: string; onClose: () => void; class?: string; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useRef(`dialog-title-${++nextId}`).current;
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (props.open && !el.open) el.showModal();
    if (!props.open && el.open) el.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class={`dialog ${props.class ?? ""}`}
      aria-labelledby={titleId}
      onClose={props.onClose}
      // A click on the backdrop (the dialog element itself, outside its content) closes it.
      onClick={(e) => e.target === ref.current && props.onClose()}
    >
      <div class="dialog-content">
        <header class="dialog-head">
          <h2 id={titleId}>{props.title}</h2>
          <button type="button" class="icon-button" onClick={props.onClose} aria-label="Close">
            <Icon icon={X} />
          </button>
        </header>
        {props.open && props.children}
      </div>
    </dialog>
  );
}
