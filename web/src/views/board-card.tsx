/** A compact board card: title on two lines at most, priority as a mark, the assignee's initials, cost and age. */
import { Ellipsis, Hourglass, Lock, OctagonAlert, SignalHigh, SignalLow, SignalMedium, type IconNode } from "lucide";
import { ageLabel, hueOf, initialsOf } from "../card-marks";
import { linkProps } from "../router";
import type { Task } from "../types";
import { Icon } from "../ui/icon";
import { ApproveButton, awaitsApproval } from "./controls";
import { ReviewMark } from "./review-mark";
import { UsageBadge } from "./usage-badge";
import { absoluteTime } from "../time-format";

const PRIORITY_ICON: Record<Task["priority"], IconNode> = { critical: OctagonAlert, high: SignalHigh, normal: SignalMedium, low: SignalLow };

/** Who a task is with: the session named for it on its server, or its server. */
export const assigneeOf = (t: Task) => t.assigned_server_name ?? null;

export function Avatar({ name }: { name: string | null }) {
  if (!name) return <span class="avatar none" title="Unassigned" aria-label="unassigned" role="img" />;
  return (
    <span class="avatar" title={`Assigned to ${name}`} style={{ "--hue": hueOf(name) }}>
      <span aria-hidden="true">{initialsOf(name)}</span>
      <span class="visually-hidden">assigned to {name}</span>
    </span>
  );
}

interface Props {
  task: Task;
  now: number;
  canWrite: boolean;
  /** Whether a person may move it anywhere (by dragging it, or from its menu). */
  movable: boolean;
  onMenu: (task: Task) => void;
}

export function BoardCard({ task, now, canWrite, movable, onMenu }: Props) {
  const awaiting = awaitsApproval(task);
  const created = new Date(task.created_at);
  return (
    <>
      <div class="card-top">
        <Icon icon={PRIORITY_ICON[task.priority]} class={`priority-mark priority-${task.priority}`} label={`${task.priority} priority`} />
        <a class="card-title" draggable={false} title={task.title} {...linkProps(`/projects/${task.project_id}/tasks/${task.id}`)}>
          <span class="clamp">{task.title}</span>
        </a>
        {movable && (
          <button type="button" class="icon-button card-menu" aria-label={`Move “${task.title}”…`} title="Move to…" onClick={() => onMenu(task)}>
            <Icon icon={Ellipsis} />
          </button>
        )}
      </div>
      <div class="card-meta">
        {task.blocked && (
          <span class="mark blocked" title="Blocked: a dependency is not resolved yet">
            <Icon icon={Lock} size={13} /> blocked
          </span>
        )}
        {awaiting && (
          <span class="mark awaiting" title="An agent created it: a person approves it before its work begins">
            <Icon icon={Hourglass} size={13} /> awaiting approval
          </span>
        )}
        <ReviewMark review={task.review} />
        <span class="card-type">{task.type}</span>
        <UsageBadge usage={task.usage} />
        <time class="age" dateTime={task.created_at} title={`Created ${absoluteTime(created)}`}>
          {ageLabel(now - created.getTime())}
        </time>
        <Avatar name={assigneeOf(task)} />
      </div>
      {awaiting && canWrite && <ApproveButton task={task} />}
    </>
  );
}
