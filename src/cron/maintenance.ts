/** Hourly housekeeping (cron trigger): forgets what has expired, and wakes deliveries nobody woke. */
import { deleteLogBefore } from "../db/permission-log";
import type { OutboxTargetKind } from "../db/schema";
import { IDEMPOTENCY_TTL_MS } from "../middleware/idempotency";
import { laneStub } from "../integrations/client";
import { DIRECTORY } from "../db/shards";
import type { RoomEnv } from "../runtime/room-env";
import { leaseSeconds, LEASED_STATUSES } from "../protocol/compute-protocol";
import { roomStub } from "../room/client";
import { strandedReviews } from "../room/review-sweep";
import { ON_TIME_MS } from "../domain/cron-slots";
import { permissionLogDays } from "../domain/permission-log-days";
import { archivingOn, projectsDueForArchive } from "../archive/due-projects";
import type { WorkerEnv } from "../runtime/worker-env";

const KEEP_EXPIRED_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * How long a usage batch's id is kept: a room tries a batch again within seconds of a failure, so a batch that may have
 * committed is always settled long before its id goes.
 */
const KEEP_USAGE_BATCH_IDS_MS = 2 * 24 * 60 * 60 * 1000;

export async function sweepExpired(env: RoomEnv, now = Date.now()) {
  const idempotencyCutoff = new Date(now - IDEMPOTENCY_TTL_MS).toISOString();
  const expiredCutoff = new Date(now - KEEP_EXPIRED_MS).toISOString();
  await env.DB.batch([
    env.DB.prepare("DELETE FROM idempotency_keys WHERE created_at < ?1").bind(idempotencyCutoff),
    env.DB.prepare("DELETE FROM refresh_tokens WHERE expires_at < ?1").bind(expiredCutoff),
    env.DB.prepare("DELETE FROM registration_tokens WHERE expires_at < ?1").bind(expiredCutoff),
    env.DB.prepare("DELETE FROM telegram_link_codes WHERE expires_at < ?1").bind(new Date(now).toISOString()),
    // Deliveries that are over (delivered or given up) are kept a week for their log; their attempts go with them.
    // Those of a project that archives are archived instead (src/archive/); those of a deleted project (the outbox has no
    // foreign key) are swept as ever.
    env.DB.prepare(
      `DELETE FROM outbox WHERE status != 'pending' AND created_at < ?1 AND project_id NOT IN (SELECT p.id FROM projects p WHERE ${archivingOn("p")})`,
    ).bind(expiredCutoff),
    env.DB.prepare("DELETE FROM usage_batches WHERE recorded_at < ?1").bind(new Date(now - KEEP_USAGE_BATCH_IDS_MS).toISOString()),
  ]);
}

/**
 * Wakes every integration that is owed a delivery already due. The rooms wake
 * them after each commit, but a wake can be lost (the room restarted, or the
 * batch's answer never came back though it committed): this bounds the wait
 * to the next sweep. `env.DB` is the shard `shard` whose outbox is read.
 */
export async function wakeStrandedDeliveries(env: RoomEnv, now = Date.now(), shard = DIRECTORY) {
  const { results } = await env.DB.prepare("SELECT DISTINCT target_kind, target_id FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?1")
    .bind(new Date(now).toISOString())
    .all<{ target_kind: OutboxTargetKind; target_id: string }>();
  await Promise.all(results.map((r) => laneStub(env, { kind: r.target_kind, id: r.target_id }, shard).wake()));
  return results.length;
}

/**
 * Wakes the rooms holding a task whose server has been silent past the lease.
 * Each room watches its own leases with its alarm; this bounds the wait when
 * an alarm was lost. One query.
 */
export async function wakeRoomsWithLapsedLeases(env: WorkerEnv, now = Date.now()) {
  const cutoff = new Date(now - leaseSeconds(env.ASSIGNMENT_LEASE_SECONDS) * 1000).toISOString();
  const { results } = await env.DB.prepare(
    `SELECT DISTINCT t.project_id FROM tasks t JOIN servers s ON s.id = t.assigned_server_id
     WHERE t.status IN (SELECT value FROM json_each(?1)) AND MAX(COALESCE(t.assigned_at, ''), COALESCE(s.last_heartbeat, '')) < ?2`,
  )
    .bind(JSON.stringify(LEASED_STATUSES), cutoff)
    .all<{ project_id: string }>();
  await Promise.all(results.map((r) => roomStub(env, r.project_id).wakeForLeases()));
  return results.length;
}

/**
 * Wakes the rooms with a schedule whose slot passed more than ON_TIME_MS ago unhandled: each room fires its schedules
 * from its alarm, and this bounds the wait when an alarm was lost (the slot is then handled by its `missed` policy).
 */
export async function wakeRoomsWithOverdueSchedules(env: WorkerEnv, now = Date.now()) {
  const { results } = await env.DB.prepare("SELECT DISTINCT project_id FROM schedules WHERE next_run_at IS NOT NULL AND next_run_at < ?1")
    .bind(new Date(now - ON_TIME_MS).toISOString())
    .all<{ project_id: string }>();
  await Promise.all(results.map((r) => roomStub(env, r.project_id).fireSchedules(now)));
  return results.length;
}

/** Deletes permission log entries older than PERMISSION_LOG_DAYS, a bounded number of rows an hour; returns how many. */
export function expirePermissionLog(env: RoomEnv, now = Date.now()) {
  // A project that archives has its log archived instead (src/archive/), no later than this.
  return deleteLogBefore(env.DB, new Date(now - permissionLogDays(env.PERMISSION_LOG_DAYS) * 24 * 60 * 60 * 1000).toISOString(), `NOT ${archivingOn("p")}`);
}

/** Wakes the rooms with review steps a lost follow-up left undone for STRANDED_MS: each makes them again. */
export async function wakeRoomsWithStrandedReviews(env: WorkerEnv, now = Date.now()) {
  const projects = [...new Set((await strandedReviews(env.DB, null, now)).map((r) => r.project_id))];
  await Promise.all(projects.map((id) => roomStub(env, id).resumeReviews(now)));
  return projects.length;
}

/** Wakes the rooms with rows due for the archive: each archives a few batches, and the rest on its alarm. */
export async function wakeRoomsToArchive(env: WorkerEnv, now = Date.now()) {
  const projects = await projectsDueForArchive(env.DB, now, permissionLogDays(env.PERMISSION_LOG_DAYS));
  await Promise.all(projects.map((id) => roomStub(env, id).archive()));
  return projects.length;
}
