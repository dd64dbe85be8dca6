/** How the Worker reaches a server's link: one Durable Object per server, named by its id. */
import type { RoomEnv } from "../runtime/room-env";
import { countedStub } from "../db/round-trips";

/** Each call on it is one billed Durable Object request, counted against the work running (a request, a room's turn). */
export const linkStub = (env: RoomEnv, serverId: string) => countedStub(env.SERVER_LINK.get(env.SERVER_LINK.idFromName(serverId)));
