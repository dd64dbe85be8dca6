/** Worker entry: the HTTP app, the housekeeping cron, and the Durable Object classes. */
import { DIRECTORY, shardD1, shardNames } from "./db/shards";
import { mirrorServers } from "./db/shard-mirrors";
import { logError } from "./runtime/log";
import { buildApp } from "./app";
import { answerKnownEmptyPoll, polledList } from "./files/file-polls";
import {
  expirePermissionLog,
  sweepExpired,
  wakeRoomsWithLapsedLeases,
  wakeRoomsWithOverdueSchedules,
  wakeRoomsWithStrandedReviews,
  wakeStrandedDeliveries,
  wakeRoomsToArchive,
} from "./cron/maintenance";
import type { WorkerEnv } from "./runtime/worker-env";

export { ProjectRoom } from "./room/project-room";
export { ServerLink } from "./server-link/server-link";
export { WebhookEndpoint } from "./integrations/webhook-endpoint";
export { TelegramChat } from "./integrations/telegram/chat";
export { SlackChannel } from "./integrations/slack/channel";
export { TelemetryExporter } from "./integrations/telemetry/exporter";
export { CodeReviewer } from "./integrations/code-review/reviewer";
export { PermissionLogWriter } from "./permission-log/writer";
export { McpSession } from "./mcp/session";

const app = buildApp();

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext) {
    const list = polledList(request);
    return (list && (await answerKnownEmptyPoll(request, list))) || app.fetch(request, env, ctx);
  },
  async scheduled(_controller, env, ctx) {
    // Each shard holds its projects' deliveries, leases, schedules, reviews and logs (the directory's tables are
    // empty on the others): the same sweep on each.
    for (const shard of shardNames(env)) {
      const on = shard === DIRECTORY ? env : { ...env, DB: shardD1(env, shard) };
      ctx.waitUntil(sweepExpired(on));
      ctx.waitUntil(wakeStrandedDeliveries(on, Date.now(), shard));
      ctx.waitUntil(wakeRoomsWithLapsedLeases(on));
      ctx.waitUntil(wakeRoomsWithOverdueSchedules(on));
      ctx.waitUntil(wakeRoomsWithStrandedReviews(on));
      ctx.waitUntil(expirePermissionLog(on));
      ctx.waitUntil(wakeRoomsToArchive(on));
    }
    // The servers' copies on the other shards made again, for any a failed write left behind.
    ctx.waitUntil(mirrorServers(env).catch((e: unknown) => logError("copying the servers to the shards failed", { operation: "sweep" }, e)));
  },
} satisfies ExportedHandler<WorkerEnv>;
