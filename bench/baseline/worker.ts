/**
 * The benchmark's baselines: the same runtime serving one D1 insert per
 * request (POST /), and a plain route moving bytes in and out of R2
 * (PUT|GET /r2/<key>).
 */
interface BaselineEnv {
  DB: D1Database;
  BLOBS: R2Bucket;
}

let ready: Promise<unknown> | undefined;

export default {
  async fetch(request: Request, env: BaselineEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/r2/")) {
      const key = url.pathname.slice(4);
      if (request.method === "PUT") {
        await env.BLOBS.put(key, request.body);
        return new Response(null, { status: 204 });
      }
      const object = await env.BLOBS.get(key);
      return object ? new Response(object.body) : new Response(null, { status: 404 });
    }
    ready ??= env.DB.prepare("CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, body TEXT NOT NULL, created_at TEXT NOT NULL)").run();
    await ready;
    const id = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO items (id, body, created_at) VALUES (?1, ?2, ?3)")
      .bind(id, await request.text(), new Date().toISOString())
      .run();
    return Response.json({ id }, { status: 201 });
  },
} satisfies ExportedHandler<BaselineEnv>;
