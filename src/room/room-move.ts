/**
 * A project moved to another shard, by an admin (POST /api/v1/projects/{id}/move), in the room's queue: while its
 * rows are copied every write is refused (503, PROJECT_MOVING) and reads go on at the old shard; once all are copied
 * the directory names the new shard and the room reopens there, then the old rows are deleted. Where it stands is kept
 * in the room's storage after each step, and the alarm goes on from there: a room killed mid-move resumes it.
 */
import { DIRECTORY, shardD1 } from "../db/shards";
import { copyStep, deleteStep, MOVE_START, type MovePosition } from "../db/project-move";
import { dropProjectCopy, mirrorProject } from "../db/shard-mirrors";
import type { Env } from "../runtime/env";
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
    return { status: 503, code: "PROJECT_MOVING", detail: `The project is moving to shard ${this.record.target}; retry in ${MOVE_RETRY_AFTER_SECONDS} s` };
  }

  get underway() {
    return this.record !== undefined;
  }

  /** Starts moving to `target` from `source` (the move under way goes on when it is the same). */
  async begin(source: string, target: string) {
    if (this.record) return;
    // The target's copy of the project's row is what its rows there hang from.
    await mirrorProject(this.env, { id: this.projectId, shard: target });
    await this.save({ source, target, switched: false, at: MOVE_START });
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
    const from = this.d1(r.source);
    if (!r.switched) {
      const next = await copyStep(from, this.d1(r.target), this.projectId, r.at, limit);
      if (next) return this.save({ ...r, at: next });
      await this.env.DB.prepare("UPDATE projects SET shard = ?2, moving_to = NULL WHERE id = ?1").bind(this.projectId, r.target).run();
      this.reopen(r.target);
      return this.save({ ...r, switched: true, at: { phase: "delete", table: 0, after: null } });
    }
    const next = await deleteStep(from, this.projectId, r.at, limit);
    if (next) return this.save({ ...r, at: next });
    await dropProjectCopy(this.env, r.source, this.projectId);
    this.record = undefined;
    await this.storage.delete(KEY);
    return false;
  }

  private d1 = (shard: string) => (shard === DIRECTORY ? this.env.DB : shardD1(this.env, shard));

  private async save(record: MoveRecord) {
    await this.storage.put(KEY, record);
    this.record = record;
    return true;
  }
}
