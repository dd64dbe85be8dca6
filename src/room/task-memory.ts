/**
 * What the room keeps of its project's tasks between groups of starts and
 * completions, so that a group reads from D1 only the tasks it does not hold.
 *
 * It stays exact because the room is the only writer of the project's tasks,
 * their dependencies and their questions, and servers and sessions (which a
 * task names) are never deleted: a group that committed hands on what it read
 * and what it wrote, modelled as it was planned (GroupReads), and whatever
 * else may have changed them makes the room forget: an operation of another
 * kind, a batch that failed or whose outcome is not known, a guarded update
 * that did not apply.
 */
import type { TaskStatus } from "../domain/lifecycle";
import type { DownstreamLink } from "../domain/cascade";
import type { RoomCommand } from "./commands";
import type { TaskRow } from "./statements";

export interface Blocker {
  depends_on_task_id: string;
  dependency_type: string;
}

/** A downstream link as read: with the ids of the other upstreams still blocking that task. */
export type LinkRead = Omit<DownstreamLink, "otherUnresolved"> & { otherUnresolved: string[] };

/** Tasks as the room holds them: each row with what blocks it, what depends on it and whether it has questions open. */
export interface HeldTasks {
  tasks: ReadonlyMap<string, TaskRow>;
  blockers: ReadonlyMap<string, Blocker[]>;
  links: ReadonlyMap<string, LinkRead[]>;
  asked: ReadonlySet<string>;
  /** What still blocked each dependent of these tasks when its link was read: its blocks/input upstreams not done. */
  blockedBy: ReadonlyMap<string, string[]>;
}

/** Tasks, completed ids and the like it holds at most; past that it starts again empty. */
const MAX_HELD = 20_000;

/** What one group read and planned, for the memory to take once the group's batch has committed. */
export interface GroupKnowledge extends HeldTasks {
  resolved: ReadonlySet<string>;
  assigned: ReadonlyMap<string, TaskStatus>;
  /** No waiting task is ready to offer (pending, unblocked, with requirements, not awaiting approval). */
  noneWaiting: boolean;
}

export class TaskMemory implements GroupKnowledge {
  readonly tasks = new Map<string, TaskRow>();
  /** Each held task's blocks/input dependencies unresolved when it was read (those resolved since are in `resolved`). */
  readonly blockers = new Map<string, Blocker[]>();
  /** Each held task's dependents, as read. */
  readonly links = new Map<string, LinkRead[]>();
  /** Held tasks with a question open. */
  readonly asked = new Set<string>();
  /**
   * What blocked each dependent of a held task when it was read (those resolved since are in `resolved`): only the room
   * resolves a dependency, and only operations that make it forget add or remove one.
   */
  readonly blockedBy = new Map<string, string[]>();
  /** Tasks the room completed: every dependency on them is resolved. */
  readonly resolved = new Set<string>();
  /** Tasks the room assigned that it holds no row of, with the status that gave them. */
  readonly assigned = new Map<string, TaskStatus>();
  /** No waiting task of the project is ready to offer: a completion that unblocks nothing then has nothing to read. */
  noneWaiting = false;
  /** False from the moment a batch is sent until what it committed is taken in: a failure in between leaves it unknown. */
  private settled = true;

  /** Whether the memory holds the task with all a group needs of it. */
  holds(id: string) {
    return this.tasks.has(id) && this.blockers.has(id) && this.links.has(id);
  }

  /**
   * The dependents whose blocking upstreams a read of their upstreams need not read again, if what the batch it rides
   * on commits leaves every dependency as it was (`keeps`): otherwise the room could not tell them apart from new ones.
   */
  knownDependents(keeps: boolean): ReadonlyMap<string, string[]> {
    return keeps ? this.blockedBy : NONE_KNOWN;
  }

  /** Whether an operation of this kind, committed, leaves every dependency as it was (and so what the memory holds of it). */
  keepsDependencies(command: RoomCommand) {
    return LEAVES_TASKS_ALONE.has(command.op) || writesOwnRowOnly(command);
  }

  /** A task's row, read whole from D1 by an operation (the room writes nothing in between). */
  remember(row: TaskRow) {
    if (this.tasks.size < MAX_HELD) this.tasks.set(row.id, row);
  }

  /** The memory, to be read: anything left unsettled is forgotten first. */
  ready(): this {
    if (!this.settled) {
      this.forget();
      this.settled = true;
    }
    return this;
  }

  /** A batch goes to D1: until it is taken in, what the memory holds may be out of date. */
  unsettle() {
    this.settled = false;
  }

  /**
   * The batch committed: a group's, whose reads and plans are now what D1 holds; other operations', which may have
   * changed what is held; or one where a guarded update did not apply (`undefined`), so that something is not as read.
   */
  committed(what: GroupKnowledge | RoomCommand[] | undefined, read?: HeldTasks) {
    let keepsRead = what !== undefined;
    if (what === undefined) this.forget();
    else if (Array.isArray(what)) for (const command of what) this.afterOperation(command);
    else keepsRead = this.take(what);
    // Read at the end of the same batch: as it left them, whatever the memory held before. Not once the group made it
    // start again empty: the read skipped what it knew then (a dependent's other blockers, completed tasks among them).
    if (keepsRead && read) this.hold(read);
    this.settled = true;
  }

  private hold(read: HeldTasks) {
    if (this.tasks.size > MAX_HELD) return this.forget();
    holdRead(this, read);
  }

  /** Whether it took the group in (false: past its limit, it started again empty). */
  private take(group: GroupKnowledge): boolean {
    // The group's rows may lean on what is held (a task it read from here and wrote): both go, or neither.
    if (this.tasks.size + this.resolved.size + this.assigned.size + this.blockedBy.size > MAX_HELD) {
      this.forget();
      return false;
    }
    for (const [id, task] of group.tasks) this.tasks.set(id, task);
    for (const [id, blockers] of group.blockers) this.blockers.set(id, blockers);
    for (const [id, links] of group.links) this.links.set(id, links);
    for (const id of group.asked) this.asked.add(id);
    for (const [id, upstreams] of group.blockedBy) this.blockedBy.set(id, upstreams);
    for (const id of group.resolved) this.resolved.add(id);
    for (const [id, status] of group.assigned) this.assigned.set(id, status);
    this.noneWaiting = group.noneWaiting;
    return true;
  }

  /** Another kind of operation committed: it may have changed what is held, save what it is known to leave alone. */
  private afterOperation(command: RoomCommand) {
    if (LEAVES_TASKS_ALONE.has(command.op)) return;
    if (writesOwnRowOnly(command)) this.forgetTask(command.taskId);
    else this.forget();
  }

  forget() {
    for (const held of [this.tasks, this.blockers, this.links, this.assigned, this.blockedBy]) held.clear();
    this.asked.clear();
    this.resolved.clear();
    this.noneWaiting = false;
  }

  private forgetTask(id: string) {
    for (const held of [this.tasks, this.blockers, this.links, this.assigned]) held.delete(id);
    this.asked.delete(id);
  }
}

/** What a read of tasks found, kept in `into` in place of what it held of them (the memory, or a group's reads). */
export function holdRead(
  into: { tasks: Map<string, TaskRow>; blockers: Map<string, Blocker[]>; links: Map<string, LinkRead[]>; asked: Set<string>; blockedBy: Map<string, string[]> },
  read: HeldTasks,
) {
  read.tasks.forEach((task, id) => {
    into.tasks.set(id, task);
    into.blockers.set(id, read.blockers.get(id)!);
    into.links.set(id, read.links.get(id)!);
    if (read.asked.has(id)) into.asked.add(id);
    else into.asked.delete(id);
  });
  read.blockedBy.forEach((upstreams, id) => into.blockedBy.set(id, upstreams));
}

const NONE_KNOWN: ReadonlyMap<string, string[]> = new Map();

/** Writes its own task's row and nothing else the memory holds (an assignment by hand takes a task out of the waiting, never into it). */
const writesOwnRowOnly = (c: RoomCommand): c is Extract<RoomCommand, { op: "progress" | "assign" }> => c.op === "progress" || c.op === "assign";

/** Operations that write no task, dependency or question. */
const LEAVES_TASKS_ALONE: ReadonlySet<RoomCommand["op"]> = new Set([
  "note",
  "agent_log",
  "presence",
  "open_session",
  "session_status",
  "session_mcp_status",
  "disable_webhook",
  "note_rule_change",
  "remote_use",
  "access_use",
  "file_upload",
  "file_request",
  "file_settle",
  "code_health_snapshot",
]);
