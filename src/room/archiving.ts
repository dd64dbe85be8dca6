/**
 * The room's archiver (src/archive/): run by the hourly housekeeping and, while batches remain, by the room's alarm a
 * second later, so the room's own operations run between batches and between alarms. One run at a time.
 */
import { Archiver } from "../archive/archiver";
import { permissionLogDays } from "../domain/permission-log-days";
import { logError } from "../runtime/log";
import type { RoomEnv } from "../runtime/room-env";
import type { RoomWriter } from "./room-writer";

const MORE = "archiveMore";

export class RoomArchiving {
  private running: Promise<boolean> | null = null;
  private readonly archiver: Archiver;

  constructor(
    private readonly storage: DurableObjectStorage,
    env: RoomEnv,
    projectId: string,
    writer: RoomWriter,
    private readonly scheduleAlarm: (at: number) => Promise<void>,
  ) {
    this.archiver = new Archiver({
      // The room's own D1 handle: its reads and writes are counted with the room's.
      d1: env.DB,
      bucket: env.BLOBS,
      projectId,
      serialise: (work) => writer.serialise(work),
      forgetTasks: () => writer.forgetTasks(),
      permissionLogDays: permissionLogDays(env.PERMISSION_LOG_DAYS),
    });
  }

  /** Runs a few batches; true when more may be due (the alarm then runs the next few). */
  run(): Promise<boolean> {
    this.running ??= this.archiver
      .run()
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

  /** The alarm's part: the next batches, when a run left some. */
  async onAlarm() {
    if (!(await this.storage.get<boolean>(MORE))) return;
    await this.run().catch((e) => logError("archiving failed", { operation: "archive" }, e));
  }
}
