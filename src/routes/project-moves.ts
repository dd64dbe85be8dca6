/** An admin moves a project to another shard (src/room/room-move.ts does it, in the project's room). */
import { and, eq, isNull, or } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectFor } from "../auth/access";
import { projects } from "../db/schema";
import { isShard, shardNames } from "../db/shards";
import { readJson } from "../http/body";
import type { HubEnv } from "../http/context";
import { Problem } from "../http/problem";
import { person } from "../middleware/guards";
import { documented } from "../openapi/operation";
import { roomStub } from "../room/client";
import type { ProblemData } from "../room/commands";
import { id } from "../views/fields";

export const projectMoveRoutes = new Hono<HubEnv>();

const moveBody = z.object({ shard: z.string().meta({ description: "The shard (a D1 binding: `DB`, `DB_1`…) to move the project to" }) });
const moving = z.object({ id, shard: z.string(), moving_to: z.string() }).meta({ id: "ProjectMove" });

projectMoveRoutes.post(
  "/:id/move",
  documented({
    id: "moveProject",
    tag: "Projects",
    summary: "Move a project to another shard",
    description:
      "Admins only. Its rows are copied to the shard in steps, in its room; meanwhile reads answer from where it was and writes answer 503 " +
      "`PROJECT_MOVING` with `Retry-After`. Once all are copied it lives on the new shard (`shard` in `GET /api/v1/projects/{id}`) and its old " +
      "rows are deleted. A move cut short (the room restarted) goes on by itself; asking again for the same shard changes nothing; another " +
      "move while one is under way (copying, or still deleting the old rows) is 409 `CONFLICT` naming it.",
    caller: "person",
    body: moveBody,
    responses: { 202: moving },
  }),
  person("admin"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id")!);
    const { shard } = await readJson(c, moveBody);
    if (!isShard(c.env, shard))
      throw new Problem(422, "VALIDATION_FAILED", "No such shard", [{ path: "shard", message: `must be one of ${shardNames(c.env).join(", ")}` }]);
    if (shard === project.shard && !project.movingTo)
      throw new Problem(422, "VALIDATION_FAILED", "The project lives there already", [{ path: "shard", message: `is the project's shard` }]);
    const [marked] = await c.var.db
      .update(projects)
      .set({ movingTo: shard })
      .where(and(eq(projects.id, project.id), eq(projects.shard, project.shard), or(isNull(projects.movingTo), eq(projects.movingTo, shard))))
      .returning({ id: projects.id });
    if (!marked) throw new Problem(409, "CONFLICT", `The project is moving to shard ${project.movingTo}; ask again once it has moved`);
    // The room begins the move, or refuses it while another is under way (still deleting its old rows): then, or if it
    // could not be asked, the mark goes back to what it was, and the project takes writes again.
    const unmark = () =>
      c.var.db
        .update(projects)
        .set({ movingTo: project.movingTo })
        .where(and(eq(projects.id, project.id), eq(projects.movingTo, shard)));
    // (Its `extensions` of unknown values make the RPC's type of the answer `never`.)
    const refused = (await roomStub(c.env, project.id)
      .moveTo(project.shard, shard)
      .catch(async (e: unknown) => {
        await unmark();
        throw e;
      })) as ProblemData | undefined;
    if (refused) {
      await unmark();
      throw new Problem(refused.status, refused.code, refused.detail);
    }
    return c.json({ id: project.id, shard: project.shard, moving_to: shard } satisfies z.infer<typeof moving>, 202);
  },
);
