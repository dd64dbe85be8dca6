/** A Lucide icon (the `lucide` package's plain icon data, so only the icons used are bundled) drawn as inline SVG. */
import type { IconNode } from "lucide";
import { createElement } from "preact";

/** Decorative by default (hidden from assistive technology); give `label` when the icon alone says something. */
export function Icon(props: { icon: IconNode; size?: number; label?: string; class?: string }) {
  const size = props.size ?? 16;
  return (
    <svg
      class={`icon ${props.class ?? ""}`}
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width={2}
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden={props.label ? undefined : "true"}
      role={props.label ? "img" : undefined}
      aria-label={props.label}
      focusable="false"
    >
      {props.icon.map(([tag, attrs], i) => createElement(tag, { key: i, ...attrs }))}
    </svg>
  );
}
