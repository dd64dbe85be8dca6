/** The three states every page passes through besides showing its content: loading, empty, and failed. */
import type { ComponentChildren } from "preact";
import { CircleAlert, Inbox as EmptyIcon } from "lucide";
import { Icon } from "./icon";

/** A placeholder while a page's first read is under way (announced politely to screen readers). */
export function Loading(props: { what?: string }) {
  return (
    <p class="state state-loading loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      Loading{props.what ? ` ${props.what}` : ""}…
    </p>
  );
}

/** What a page shows when there is nothing yet, and what to do about it. */
export function Empty(props: { title: string; children?: ComponentChildren }) {
  return (
    <div class="state state-empty">
      <Icon icon={EmptyIcon} size={28} />
      <p class="state-title">{props.title}</p>
      {props.children && <div class="state-body">{props.children}</div>}
    </div>
  );
}

/** A read that failed: what failed, the hub's reason, and a way to try again. */
export function Failed(props: { what: string; message: string; retry?: () => void }) {
  return (
    <div class="state state-error" role="alert">
      <Icon icon={CircleAlert} size={28} />
      <p class="state-title">{`${props.what[0]!.toUpperCase()}${props.what.slice(1)} could not be read.`}</p>
      <p class="state-body">{props.message}</p>
      {props.retry && (
        <button type="button" class="secondary" onClick={props.retry}>
          Try again
        </button>
      )}
    </div>
  );
}
