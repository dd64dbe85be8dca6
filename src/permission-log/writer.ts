/**
 * One project's permission-log writer: the only place its entries are inserted. Posts from every daemon queue here
 * and are written one batch at a time, several posts to a batch when they arrive together, so however many daemons
 * flush at once, at most one of the project's log batches is ever in D1's queue ahead of a task write. A post is
 * answered once its rows are committed; the queue lives only in memory, so an eviction fails the posts waiting
 * (their daemons see an error) and loses nothing that was acknowledged.
 */
import { DurableObject } from "cloudflare:workers";
import { insertLogRows, type LogBatch, type LogRow } from "../db/permission-log";
import { DIRECTORY, homeOf, shardD1 } from "../db/shards";
import type { PermissionSource } from "../db/schema";
import type { Env } from "../runtime/env";
import { laneStub } from "../integrations/client";
import { deniedNotices, deniedRecipients } from "../integrations/telegram/denied-calls";
import { logError } from "../runtime/log";
import type { RoomEnv } from "../runtime/room-env";
import { outboxTargets } from "../room/outbox";

/**
 * Rows a batch takes at most, from one post or several: small batches keep a task write's wait short. A longer post
 * is written over several batches, in order, and answered after its last.
 */
export const ROWS_PER_BATCH = 250;

interface Waiting {
  rows: LogRow[];
  source: PermissionSource;
  /** Rows of this post already committed, or in the batch being written. */
  taken: number;
  rowsWritten: number;
  done: (rowsWritten: number) => void;
  failed: (error: unknown) => void;
}

/** What the writer reaches: D1, the project's room (told of new entries) and the chats owed a notice of denied calls. */
interface WriterEnv extends RoomEnv {
  PROJECT_ROOM: DurableObjectNamespace<{ permissionsLogged(count: number, newestCreatedAt: string): Promise<void> } & Rpc.DurableObjectBranded>;
}

export class PermissionLogWriter extends DurableObject<WriterEnv> {
  private waiting: Waiting[] = [];
  private writing = false;

  /** Writes one post's rows of this project; answers the D1 rows written for them once they are committed. */
  write(rows: LogRow[]): Promise<number> {
    return this.queue(rows, "hook");
  }

  /**
   * Writes rows made of the agents' telemetry, each only while its session has no hook entry (and once, however often
   * its export is sent again); answers the D1 rows written for them once they are committed.
   */
  writeTelemetry(rows: LogRow[]): Promise<number> {
    return this.queue(rows, "telemetry");
  }

  private queue(rows: LogRow[], source: PermissionSource): Promise<number> {
    return new Promise((done, failed) => {
      this.waiting.push({ rows, source, taken: 0, rowsWritten: 0, done, failed });
      if (!this.writing) void this.drain();
    });
  }

  private async drain() {
    this.writing = true;
    try {
      while (this.waiting.length > 0) await this.writeBatch(this.nextBatch());
    } finally {
      this.writing = false;
    }
  }

  /** The next rows in arrival order, up to ROWS_PER_BATCH, each with the post it came from. */
  private nextBatch() {
    const parts: { post: Waiting; rows: LogRow[] }[] = [];
    let room = ROWS_PER_BATCH;
    for (const post of this.waiting) {
      if (room === 0) break;
      const rows = post.rows.slice(post.taken, post.taken + room);
      post.taken += rows.length;
      room -= rows.length;
      parts.push({ post, rows });
    }
    return parts;
  }

  private async writeBatch(parts: { post: Waiting; rows: LogRow[] }[]) {
    const rows = parts.flatMap((p) => p.rows);
    const hook = parts.flatMap((p) => (p.post.source === "hook" ? p.rows : []));
    const telemetry = parts.flatMap((p) => (p.post.source === "telemetry" ? p.rows : []));
    const now = rows.reduce((latest, row) => (row[13] > latest ? row[13] : latest), "");
    try {
      // Denied calls are told of as the hook logs them; the telemetry's are only listed.
      const { also, rowsWritten, telemetryKept, shard } = await this.insert({ hook, telemetry }, now);
      // Each post is billed its share of the batch.
      for (const { post, rows: part } of parts) post.rowsWritten += (rowsWritten * part.length) / rows.length;
      if (hook.length + telemetryKept > 0) this.announce(rows, hook.length + telemetryKept);
      for (const target of outboxTargets(also))
        this.ctx.waitUntil(
          laneStub(this.env, target, shard)
            .wake()
            .catch((e: unknown) => logError("waking a chat for denied calls failed", { target_id: target.id, operation: "permissions_denied" }, e)),
        );
      const finished = this.waiting.filter((post) => post.taken === post.rows.length);
      this.waiting = this.waiting.filter((post) => post.taken < post.rows.length);
      for (const post of finished) post.done(post.rowsWritten);
    } catch (e) {
      // The posts in the batch fail whole: what remains of them is not written after it.
      const failed = new Set(parts.map((p) => p.post));
      this.waiting = this.waiting.filter((post) => !failed.has(post));
      for (const post of failed) post.failed(e);
    }
  }

  /**
   * The batch written on the project's shard (asked of the directory each batch, so a move is followed at once), with
   * the notices of its denied calls in the same transaction: recorded where the project lives, so that the lane
   * draining that shard's outbox (src/integrations/lane-names.ts) names the sessions and tasks they mention. The people
   * who hear of them live in the directory: a project on another shard reads them there first.
   */
  private async insert(batch: LogBatch, now: string) {
    const projectId = (batch.hook[0] ?? batch.telemetry[0])![1];
    const shard = await homeOf(this.env, projectId);
    if (shard === DIRECTORY) return { ...(await insertLogRows(this.env.DB, batch, deniedNotices(this.env.DB, batch.hook, now))), shard };
    const d1 = shardD1(this.env, shard);
    const recipients = await deniedRecipients(this.env.DB, batch.hook);
    return { ...(await insertLogRows(d1, batch, deniedNotices(d1, batch.hook, now, recipients))), shard };
  }

  /** The room's dashboards hear how many entries arrived and the newest one's time; best effort. */
  private announce(rows: LogRow[], count: number) {
    const projectId = rows[0]![1];
    const newest = rows.reduce((latest, row) => (row[11] > latest ? row[11] : latest), "");
    this.ctx.waitUntil(
      this.env.PROJECT_ROOM.get(this.env.PROJECT_ROOM.idFromName(projectId))
        .permissionsLogged(count, newest)
        .catch((e: unknown) => logError("telling a room of logged permissions failed", { project_id: projectId, operation: "permissions_logged" }, e)),
    );
  }
}

/** The project's writer. */
export const logWriterStub = (env: Env & { PERMISSION_LOG_WRITER: DurableObjectNamespace<PermissionLogWriter> }, projectId: string) =>
  env.PERMISSION_LOG_WRITER.get(env.PERMISSION_LOG_WRITER.idFromName(projectId));
