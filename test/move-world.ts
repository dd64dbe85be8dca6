/** What the tests of moves between shards share: a project on one shard, its move asked for, stepped and driven to its end. */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { bootstrapAdmin, call } from "./helpers";
import { cli, expectOk, newTask, T, worldUnder, type World } from "./task-world";
import type { ProjectRoom } from "../src/room/project-room";
import { MOVED_TABLES } from "../src/db/shard-tables";

/** The hub's admin, set by moveSetup() in the file's beforeAll. */
export const moves = { admin: "" };
export async function moveSetup() {
  moves.admin = await bootstrapAdmin();
}

export const room = (projectId: string) => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
export const d1 = (shard: string) => (shard === "DB" ? env.DB : env.DB_1!);

/** Which local databases hold the row of `table` with this id. */
export async function shardsHolding(table: string, id: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of ["DB", "DB_1"]) if (await d1(name).prepare(`SELECT 1 FROM ${table} WHERE id = ?1`).bind(id).first()) found.push(name);
  return found;
}
export const count = async (shard: string, sql: string, ...binds: unknown[]) =>
  Number(
    await d1(shard)
      .prepare(sql)
      .bind(...binds)
      .first("n"),
  );
export const placement = (projectId: string) =>
  env.DB.prepare("SELECT shard, moving_to FROM projects WHERE id = ?1").bind(projectId).first<{ shard: string; moving_to: string | null }>();
export const moveRecord = (projectId: string) =>
  runInDurableObject(room(projectId), (_r, state) => state.storage.get<{ switched: boolean; at: { table: number } }>("move"));
export const tableIndex = (name: string) => MOVED_TABLES.findIndex((t) => t.name === name);

/** The copy stepped by hand (its alarm kept away) until it is about to copy table `table`. */
export async function copyUpTo(projectId: string, table: number) {
  await runInDurableObject(room(projectId), (_r, state) => state.storage.deleteAlarm());
  for (let i = 0; i < 400 && (await moveRecord(projectId))!.at.table < table; i++)
    await runInDurableObject(room(projectId), (r: ProjectRoom) => r.moveOn(0, 1000));
  expect((await moveRecord(projectId))!.at.table).toBe(table);
}

/** A world whose project lives on one shard; `to` is the other. */
export async function world(name: string) {
  const w = await worldUnder(moves.admin, name);
  const from = (await placement(w.project.id))!.shard;
  return { w, from, to: from === "DB" ? "DB_1" : "DB" };
}

export const askMove = (projectId: string, shard: string) => call(`/api/v1/projects/${projectId}/move`, { token: moves.admin, body: { shard } });

/** The room's alarm run until the move has ended (its record gone), as the runtime would run it (its steps when none is set). */
export async function driveToEnd(projectId: string) {
  for (let i = 0; i < 400 && (await moveRecord(projectId)); i++)
    if (!(await runDurableObjectAlarm(room(projectId)))) await runInDurableObject(room(projectId), (r: ProjectRoom) => r.moveOn());
  expect(await moveRecord(projectId)).toBeUndefined();
}

/** A write through the Worker, sent again after each 503 (as a client honouring Retry-After does, sooner). */
export async function untilTaken(send: () => ReturnType<typeof call>, status = 201) {
  for (let i = 0; i < 400; i++) {
    const reply = await send();
    if (reply.status !== 503) {
      expect(reply.status).toBe(status);
      return reply;
    }
    expect(reply.headers.get("Retry-After")).toBe("5");
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("still refused");
}

export async function runningTask(w: World) {
  const id = await newTask(w);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  return id;
}
