/** WebSocket endpoints answer a plain request with 426, naming the upgrade they need. */
import type { HubContext } from "./context";
import { Problem } from "./problem";

export function requireUpgrade(c: HubContext) {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
    throw new Problem(426, "UPGRADE_REQUIRED", "This endpoint speaks WebSocket: send an Upgrade request", undefined, { Upgrade: "websocket" });
  }
}
