/** The board's two views of the same tasks: columns by status, or a list (`?view=list`, so a link keeps the view). */
import { Columns3, List } from "lucide";
import { linkProps } from "../router";
import { Icon } from "../ui/icon";

export type TaskView = "board" | "list";

export const viewOf = (search: string): TaskView => (new URLSearchParams(search).get("view") === "list" ? "list" : "board");

export function ViewSwitch(props: { projectId: string; current: TaskView }) {
  const base = `/projects/${props.projectId}/board`;
  return (
    <nav class="view-switch" aria-label="View">
      <a {...linkProps(base)} aria-current={props.current === "board" ? "page" : undefined}>
        <Icon icon={Columns3} /> Board
      </a>
      <a {...linkProps(`${base}?view=list`)} aria-current={props.current === "list" ? "page" : undefined}>
        <Icon icon={List} /> List
      </a>
    </nav>
  );
}
