import type { Context } from "hono";
import type { AccessCheck, Principal } from "../auth/principal";
import type { Db } from "../db/client";
import type { RequestSession } from "../db/request-session";
import type { StoredDataref } from "../datarefs/offload";
import type { WorkerEnv } from "../runtime/worker-env";

export interface HubEnv {
  Bindings: WorkerEnv;
  Variables: {
    db: Db;
    /** The request's D1 session, which its statements run in; a room's write moves it forward (room/client.ts). */
    d1Session?: RequestSession;
    /** Names this request in its response (X-Request-Id), its 5xx problems and its log lines. */
    requestId: string;
    principal?: Principal;
    /**
     * Set by handlers whose response carries a secret, for idempotent replay: `once`, shown once and never stored;
     * `sealed`, stored sealed under DATA_KEY and handed out again (not stored at all on a hub without DATA_KEY).
     */
    secretResponse?: "once" | "sealed";
    /** The project access this request was granted (auth/access.ts): a replay of its answer must be granted it again. */
    accessChecks?: AccessCheck[];
    /** DataRefs this request stored by offloading large JSON: removed again if the request is refused. */
    offloaded?: StoredDataref[];
    /** The request's JSON body, kept when it may hold a DataRef pointer: a write through a project's room checks them first. */
    pointingBody?: unknown;
    /** What became of this request's room operation: asked (no answer yet), committed, or refused. */
    roomOutcome?: "asked" | "committed" | "refused";
    /** The operation's id in the API's description (src/openapi), set by documented(): named in log lines. */
    operation?: string;
    /**
     * The project and task this request turned out to be about, for its log line (set where they are resolved, once
     * the caller's access is checked); the project is also the one whose DataRefs its answer links (middleware/dataref-links.ts).
     */
    logProject?: string;
    logTask?: string;
  };
}

export type HubContext = Context<HubEnv>;
