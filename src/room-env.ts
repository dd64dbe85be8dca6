/** What the project rooms run with: `Env`, and the servers' links they hand the daemon's pushes to. */
import type { Env } from "./env";
import type { ServerLink } from "./server-link/server-link";

export interface RoomEnv extends Env {
  SERVER_LINK: DurableObjectNamespace<ServerLink>;
}
