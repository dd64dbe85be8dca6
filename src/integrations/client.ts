/** How the hub reaches an integration's delivery lane: one Durable Object per webhook or linked chat, named by its id. */
import type { RoomEnv } from "../runtime/room-env";
import { countedStub } from "../db/round-trips";
import type { OutboxTarget } from "../room/outbox";

// Each call on these is one billed Durable Object request, counted against the work running.
export const webhookStub = (env: RoomEnv, webhookId: string) => countedStub(env.WEBHOOK_ENDPOINT.get(env.WEBHOOK_ENDPOINT.idFromName(webhookId)));

export const laneStub = (env: RoomEnv, target: OutboxTarget) =>
  target.kind === "webhook" ? webhookStub(env, target.id) : countedStub(env.TELEGRAM_CHAT.get(env.TELEGRAM_CHAT.idFromName(target.id)));
