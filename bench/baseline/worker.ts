/** The benchmark's baseline: the same runtime serving one D1 insert per request. */
let ready: Promise<unknown> | undefined;

export default {
  async fetch(request: Request, env: { DB: D1Database }): Promise<Response> {
    ready ??= env.DB.prepare("CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, body TEXT NOT NULL, created_at TEXT NOT NULL)").run();
    await ready;
    const id = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO items (id, body, created_at) VALUES (?1, ?2, ?3)")
      .bind(id, await request.text(), new Date().toISOString())
      .run();
    return Response.json({ id }, { status: 201 });
  },
} satisfies ExportedHandler<{ DB: D1Database }>;
