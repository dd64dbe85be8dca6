/** The Worker's whole environment: what the rooms run with, and the project rooms it sends every task write to, and the
 * projects' permission-log writers. */
import type { RoomEnv } from "./room-env";
import type { PermissionLogWriter } from "../permission-log/writer";
import type { ProjectRoom } from "../room/project-room";
import type { McpSession } from "../mcp/session";

export interface WorkerEnv extends RoomEnv {
  PROJECT_ROOM: DurableObjectNamespace<ProjectRoom>;
  PERMISSION_LOG_WRITER: DurableObjectNamespace<PermissionLogWriter>;
  MCP_SESSION: DurableObjectNamespace<McpSession>;
}
