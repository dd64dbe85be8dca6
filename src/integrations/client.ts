/**
 * How the hub reaches an integration's delivery lane: one Durable Object per webhook, linked chat, project's
 * telemetry export or Slack channel, named by its id (the export's is its project's, a channel's `team:channel`; a
 * chat's lane on a shard other than the directory adds `@shard`, lane-names.ts).
 */
import type { RoomEnv } from "../runtime/room-env";
import { countedStub } from "../db/round-trips";
import type { OutboxTarget } from "../room/outbox";
import { DIRECTORY } from "../db/shards";
import { chatLaneName } from "./lane-names";
import { logError } from "../runtime/log";

// Each call on these is one billed Durable Object request, counted against the work running.
export const webhookStub = (env: RoomEnv, webhookId: string) => countedStub(env.WEBHOOK_ENDPOINT.get(env.WEBHOOK_ENDPOINT.idFromName(webhookId)));

export const telemetryStub = (env: RoomEnv, projectId: string) => countedStub(env.TELEMETRY_EXPORT.get(env.TELEMETRY_EXPORT.idFromName(projectId)));

/** The lane of a target owed deliveries recorded on `shard` (a webhook's and an export's follow their project themselves). */
export const laneStub = (env: RoomEnv, target: OutboxTarget, shard = DIRECTORY) => {
  switch (target.kind) {
    case "webhook":
      return webhookStub(env, target.id);
    case "telemetry":
      return telemetryStub(env, target.id);
    case "telegram":
      return countedStub(env.TELEGRAM_CHAT.get(env.TELEGRAM_CHAT.idFromName(chatLaneName(target.id, shard))));
    case "slack":
      return countedStub(env.SLACK_CHANNEL.get(env.SLACK_CHANNEL.idFromName(chatLaneName(target.id, shard))));
  }
};

/** Wakes the lane of a target owed deliveries on `shard`; a failure is logged (the hourly sweep wakes it again). */
export const wakeLane = (env: RoomEnv, target: OutboxTarget, shard: string, projectId: string) =>
  laneStub(env, target, shard)
    .wake()
    .catch((e: unknown) => logError("waking an integration failed", { project_id: projectId, operation: "wake_integration", target }, e));
