/**
 * A project moved to another shard, by an admin (POST /api/v1/projects/{id}/move), in the room's queue: while its
 * rows are copied every write is refused (503, PROJECT_MOVING) and reads go on at the old shard; once all are copied
 * the directory names the new shard and the room reopens there, then the old rows are deleted. Where it stands is kept
 * in the room's storage after each step, and the alarm goes on from there: a room killed mid-move resumes it.
 */
import { d1Of, DIRECTORY, isShard } from "../db/shards";
import { copyStep, deleteStep, MOVE_START, type MovePosition } from "../db/project-move";
import { dropProjectCopy, mirrorProject, settingsToDirectory } from "../db/shard-mirrors";
import type { Env } from "../runtime/env";
import { logError } from "../runtime/log";
import type { ProblemData } from "./commands";

export const MOVE_RETRY_AFTER_SECONDS = 5;
/** Rows a step copies or deletes: one D1 batch, short enough that the room's other work is never held up long. */
export const MOVE_STEP_ROWS = 200;

interface MoveRecord {
  source: string;
  target: string;
  /** Set once the directory names the target: from then on the old rows are deleted. */
  switched: boolean;
  at: MovePosition;
}

const KEY = "move";

export const movingProblem = (target: string): ProblemData => ({
  status: 503,
  code: "PROJECT_MOVING",
  detail: `The project is moving to shard ${target}; retry in ${MOVE_RETRY_AFTER_SECONDS} s`,
});

export class RoomMove {
  private record: MoveRecord | undefined;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
    private readonly projectId: string,
    /** The room reopens on the shard its project lives on now. */
    private readonly reopen: (shard: string) => void,
  ) {}

  /** Whether a move is under way. */
  async load(): Promise<boolean> {
    this.record = await this.storage.get<MoveRecord>(KEY);
    return this.record !== undefined;
  }

  /** Whether writes wait: from the move's start until the directory names the new shard. */
  refusal(): ProblemData | undefined {
    if (!this.record || this.record.switched) return undefined;
    return movingProblem(this.record.target);
  }

  get underway() {
    return this.record !== undefined;
  }

  /**
   * Starts moving to `target` from `source`; the same move still copying goes on. Another, or any while the last one
   * still deletes its old rows, is refused: the room does one move at a time.
   */
  async begin(source: string, target: string): Promise<ProblemData | undefined> {
    const r = this.record;
    if (r && r.source === source && r.target === target && !r.switched) return undefined;
    if (r) {
      const doing = r.switched ? `deleting its old rows on shard ${r.source} after its move to ${r.target}` : `moving from shard ${r.source} to ${r.target}`;
      return { status: 409, code: "CONFLICT", detail: `The project is still ${doing}; ask again once that move has ended` };
    }
    // The settings the room wrote on the source's copy are the truth (settingsToDirectory may have failed after the
    // write): the directory's row catches up first, then the target's copy, which its rows there hang from, is made of it.
    await settingsToDirectory(this.env, { id: this.projectId, shard: source });
    await mirrorProject(this.env, { id: this.projectId, shard: target });
    await this.save({ source, target, switched: false, at: MOVE_START });
    return undefined;
  }

  /** Steps, each in the room's queue, for up to `ms` (one at least); whether more are left. */
  async run(serialise: (work: () => Promise<boolean>) => Promise<boolean>, ms: number, rows?: number): Promise<boolean> {
    const until = Date.now() + ms;
    let more = this.underway;
    while (more) {
      more = await serialise(() => this.step(rows));
      if (Date.now() >= until) break;
    }
    return more;
  }

  /** One step of the move; whether more are left. */
  async step(limit = MOVE_STEP_ROWS): Promise<boolean> {
    const r = this.record;
    if (!r) return false;
    if (!r.switched && !this.bound(r.target)) return this.abandon(r, `shard ${r.target} is no longer bound`);
    const from = this.d1(r.source);
    if (!r.switched) {
      const next = await copyStep(from, this.d1(r.target), this.projectId, r.at, limit);
      if (next) return this.save({ ...r, at: next });
      await this.env.DB.prepare("UPDATE projects SET shard = ?2, moving_to = NULL WHERE id = ?1").bind(this.projectId, r.target).run();
      // The target's copy of the project's row names its new home too (it was copied while the move was recorded).
      await mirrorProject(this.env, { id: this.projectId, shard: r.target });
      // Recorded before the room reopens, so that no operation can commit on the source once the writer changes.
      await this.save({ ...r, switched: true, at: { phase: "delete", table: 0, after: null } });
      this.reopen(r.target);
      return true;
    }
    // Its old rows stay where no binding reaches them any more; the project lives on the target.
    if (!this.bound(r.source)) return this.end();
    const next = await deleteStep(from, this.projectId, r.at, limit);
    if (next) return this.save({ ...r, at: next });
    await dropProjectCopy(this.env, r.source, this.projectId);
    return this.end();
  }

  private async end() {
    this.record = undefined;
    await this.storage.delete(KEY);
    return false;
  }

  /** A move that cannot go on ends, logged, with the project writable where it was: its rows there were never touched. */
  private async abandon(r: MoveRecord, why: string) {
    logError("project move abandoned", { project_id: this.projectId, operation: "project_move" }, new Error(`moving to ${r.target}: ${why}`));
    await this.env.DB.prepare("UPDATE projects SET moving_to = NULL WHERE id = ?1 AND shard = ?2").bind(this.projectId, r.source).run();
    return this.end();
  }

  private bound = (shard: string) => shard === DIRECTORY || isShard(this.env, shard);
  private d1 = (shard: string) => d1Of(this.env, shard);

  private async save(record: MoveRecord) {
    await this.storage.put(KEY, record);
    this.record = record;
    return true;
  }
}
