/**
 * The room's archiver (src/archive/): run by the hourly housekeeping and, while batches remain, by the room's alarm a
 * second later, so the room's own operations run between batches and between alarms. One run at a time.
 */
import { Archiver } from "../archive/archiver";
import { buildExport } from "../archive/exports";
import { permissionLogDays } from "../domain/permission-log-days";
import { logError } from "../runtime/log";
import type { RoomEnv } from "../runtime/room-env";
import type { RoomWriter } from "./room-writer";

const MORE = "archiveMore";

export class RoomArchiving {
  private running: Promise<boolean> | null = null;
  private readonly archiver: Archiver;
  private readonly d1: D1Database;
  private readonly bucket: R2Bucket;

  constructor(
    private readonly storage: DurableObjectStorage,
    env: RoomEnv,
    private readonly projectId: string,
    writer: RoomWriter,
    private readonly scheduleAlarm: (at: number) => Promise<void>,
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
    this.running ??= this.exclusive(() => this.archiver.run())
      .then(async (more) => {
        if (more) {
          await this.storage.put(MORE, true);
          await this.scheduleAlarm(Date.now() + 1000);
        } else await this.storage.delete(MORE);
        return more;
      })
      .finally(() => (this.running = null));
    return this.running;
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
    return this.exclusive(() => buildExport(this.d1, this.bucket, this.projectId, exportId));
  }

  /** The alarm's part: the next batches, when a run left some. */
  async onAlarm() {
    if (!(await this.storage.get<boolean>(MORE))) return;
    await this.run().catch((e) => logError("archiving failed", { operation: "archive" }, e));
  }
}
