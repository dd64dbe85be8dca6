/**
 * The room's archiver (src/archive/): run by the hourly housekeeping and, while batches remain, by the room's alarm a
 * second later, so the room's own operations run between batches and between alarms. One run at a time, and none
 * while the project moves between shards (a batch committed mid-copy would delete rows the target has not got yet):
 * the runs and exports asked for meanwhile wait for the move's end.
 */
import { Archiver } from "../archive/archiver";
import { buildExport } from "../archive/exports";
import { permissionLogDays } from "../domain/permission-log-days";
import { logError } from "../runtime/log";
import type { RoomEnv } from "../runtime/room-env";
import type { RoomWriter } from "./room-writer";

const MORE = "archiveMore";
/** Exports asked for while the project moved, built once it has. */
const WAITING_EXPORTS = "exportsWaiting";

export class RoomArchiving {
  private running: Promise<boolean> | null = null;
  private readonly archiver: Archiver;
  private readonly d1: D1Database;
  private readonly bucket: R2Bucket;
  /** Moves beginning (waiting for the run under way), and whether this archiver's shard is the project's no more. */
  private held = 0;
  private retired = false;

  constructor(
    private readonly storage: DurableObjectStorage,
    env: RoomEnv,
    private readonly projectId: string,
    writer: RoomWriter,
    private readonly scheduleAlarm: (at: number) => Promise<void>,
    private readonly moving: () => boolean,
  ) {
    this.d1 = env.DB;
    this.bucket = env.BLOBS;
    this.archiver = new Archiver({
      // The room's own D1 handle: its reads and writes are counted with the room's.
      d1: env.DB,
      bucket: env.BLOBS,
      projectId,
      serialise: (work) => writer.serialise(work),
      forgetTasks: () => writer.forgetTasks(),
      permissionLogDays: permissionLogDays(env.PERMISSION_LOG_DAYS),
      // In the room's storage: a run that dies with the room (out of memory) still counts.
      attempts: {
        bump: async (id) => {
          const n = ((await storage.get<number>(`archiveAttempts:${id}`)) ?? 0) + 1;
          await storage.put(`archiveAttempts:${id}`, n);
          return n;
        },
        clear: (id) => storage.delete(`archiveAttempts:${id}`).then(() => undefined),
      },
    });
  }

  /** Runs a few batches; true when more may be due (the alarm then runs the next few). */
  run(): Promise<boolean> {
    this.running ??= this.exclusive(async () => {
      if (this.paused()) {
        // Left for the alarm after the move (a retired archiver's successor runs it).
        await this.storage.put(MORE, true);
        return false;
      }
      const more = await this.archiver.run();
      if (more) {
        await this.storage.put(MORE, true);
        await this.scheduleAlarm(Date.now() + 1000);
      } else await this.storage.delete(MORE);
      return more;
    }).finally(() => (this.running = null));
    return this.running;
  }

  private paused = () => this.retired || this.held > 0 || this.moving();

  /** Runs `work` once the run or export under way has ended, none starting meanwhile (a move begins so). */
  async withoutRuns<T>(work: () => Promise<T>): Promise<T> {
    this.held++;
    try {
      await this.queue;
      return await work();
    } finally {
      this.held--;
    }
  }

  /** The project's rows are on another shard now: this archiver (of the old handle) never runs again. */
  retire() {
    this.retired = true;
  }

  /** One piece of work at a time: a run of the archiver or an export (which must see no batch commit while it reads). */
  private queue: Promise<unknown> = Promise.resolve();
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Builds the project's history export, between runs of the archiver. */
  export(exportId: string): Promise<void> {
    return this.exclusive(async () => {
      if (!this.paused()) return buildExport(this.d1, this.bucket, this.projectId, exportId);
      const waiting = (await this.storage.get<string[]>(WAITING_EXPORTS)) ?? [];
      await this.storage.put(WAITING_EXPORTS, [...waiting, exportId]);
    });
  }

  /** The alarm's part: the next batches, when a run left some, and the exports that waited for a move. */
  async onAlarm() {
    if (this.paused()) return;
    const waiting = (await this.storage.get<string[]>(WAITING_EXPORTS)) ?? [];
    if (waiting.length > 0) {
      await this.storage.delete(WAITING_EXPORTS);
      for (const id of waiting) await this.export(id).catch((e) => logError("export failed", { project_id: this.projectId, operation: "export" }, e));
    }
    if (!(await this.storage.get<boolean>(MORE))) return;
    await this.run().catch((e) => logError("archiving failed", { operation: "archive" }, e));
  }
}
