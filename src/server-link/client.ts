/** How the Worker reaches a server's link: one Durable Object per server, named by its id. */
import type { RoomEnv } from "../room-env";

export const linkStub = (env: RoomEnv, serverId: string) => env.SERVER_LINK.get(env.SERVER_LINK.idFromName(serverId));
