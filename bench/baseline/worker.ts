/**
 * The benchmark's baselines, in the same runtime as the hub:
 * - POST / makes one D1 insert per request;
 * - POST /room makes the same insert from a Durable Object the request calls
 *   over RPC: the least a write through a project's room can cost;
 * - POST /room/logged has that Durable Object append an event beside the
 *   insert, in one batch: the least a task's change can cost, since every
 *   change the hub makes leaves an event in the same transaction;
 * - GET /read makes one D1 read (`SELECT 1`) and answers a small JSON object,
 *   as the hub's GET /api/v1/health does with the hub's Worker around it;
 * - PUT|GET /r2/<key> moves bytes in and out of R2;
 * - POST /parse only reads and parses a JSON body: the least a post of the
 *   permission log can cost, bytes carried and nothing written;
 * - GET /empty answers `[]` and does nothing else: the least any request costs;
 * - a Broadcaster sends one frame to every socket it holds: the least an
 *   event to many dashboards can cost. The bench in workerd opens sockets to
 *   it directly, and through GET /broadcaster/<name>, which hands the upgrade
 *   on to it, as any Worker in front of a Durable Object's sockets does.
 */
import { DurableObject } from "cloudflare:workers";

interface BaselineEnv {
  DB: D1Database;
  BLOBS: R2Bucket;
  INSERTER: DurableObjectNamespace<Inserter>;
  BROADCASTER: DurableObjectNamespace<Broadcaster>;
}

const CREATE_ITEMS = "CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, body TEXT NOT NULL, created_at TEXT NOT NULL)";
const INSERT_ITEM = "INSERT INTO items (id, body, created_at) VALUES (?1, ?2, ?3)";

let ready: Promise<unknown> | undefined;

/** One insert of `body`; its new row's id. */
async function insert(db: D1Database, body: string): Promise<string> {
  ready ??= db.prepare(CREATE_ITEMS).run();
  await ready;
  const id = crypto.randomUUID();
  await db.prepare(INSERT_ITEM).bind(id, body, new Date().toISOString()).run();
  return id;
}

let logReady: Promise<unknown> | undefined;

/**
 * The insert of `body` and an event naming it, in one batch. As the hub's, the event is a row keyed by its place in
 * the log and an entry in an index by what it is about: two rows written.
 */
async function loggedInsert(db: D1Database, body: string): Promise<string> {
  logReady ??= db.batch([
    db.prepare(CREATE_ITEMS),
    db.prepare(
      "CREATE TABLE IF NOT EXISTS item_events (seq INTEGER PRIMARY KEY, item_id TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL)",
    ),
    db.prepare("CREATE INDEX IF NOT EXISTS item_events_item ON item_events (item_id)"),
  ]);
  await logReady;
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await db.batch([
    db.prepare(INSERT_ITEM).bind(id, body, now),
    db.prepare("INSERT INTO item_events (item_id, type, data, created_at) VALUES (?1, 'item_created', ?2, ?3)").bind(id, body, now),
  ]);
  return id;
}

/** A Durable Object that only inserts: one instance, as one project has one room. */
export class Inserter extends DurableObject<BaselineEnv> {
  insert(body: string): Promise<string> {
    return insert(this.env.DB, body);
  }

  loggedInsert(body: string): Promise<string> {
    return loggedInsert(this.env.DB, body);
  }
}

/** Accepts any WebSocket (hibernatable, as a room's are) and sends a frame to all of them, as a room publishes an event. */
export class Broadcaster extends DurableObject<BaselineEnv> {
  override fetch(): Response {
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Sends `frame` to every open socket; how many it went to. */
  publish(frame: string): number {
    const sockets = this.ctx.getWebSockets();
    for (const ws of sockets) ws.send(frame);
    return sockets.length;
  }
}

export default {
  async fetch(request: Request, env: BaselineEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/empty") return Response.json([]);
    if (url.pathname.startsWith("/broadcaster/")) return env.BROADCASTER.getByName(url.pathname.slice("/broadcaster/".length)).fetch(request);
    if (url.pathname.startsWith("/r2/")) {
      const key = url.pathname.slice(4);
      if (request.method === "PUT") {
        await env.BLOBS.put(key, request.body);
        return new Response(null, { status: 204 });
      }
      const object = await env.BLOBS.get(key);
      return object ? new Response(object.body) : new Response(null, { status: 404 });
    }
    if (url.pathname === "/read") {
      await env.DB.prepare("SELECT 1").first();
      return Response.json({ status: "ok" });
    }
    if (url.pathname === "/parse") {
      const body = await request.json<{ entries?: unknown[] }>();
      return Response.json({ accepted: Array.isArray(body.entries) ? body.entries.length : 1 }, { status: 201 });
    }
    const body = await request.text();
    const inserter = () => env.INSERTER.get(env.INSERTER.idFromName("bench"));
    const id =
      url.pathname === "/room"
        ? await inserter().insert(body)
        : url.pathname === "/room/logged"
          ? await inserter().loggedInsert(body)
          : await insert(env.DB, body);
    return Response.json({ id }, { status: 201 });
  },
} satisfies ExportedHandler<BaselineEnv>;
