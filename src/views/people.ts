import { z } from "zod";
import type { ProjectRow, UserRow } from "../db/client";
import { ROLES } from "../db/schema";
import { id, timestamp } from "./fields";
import { MAX_ARCHIVE_DAYS, MAX_LIVENESS_MINUTES, projectSettingsOf, STALL_ACTIONS } from "../domain/project-settings";

export const userSchema = z
  .object({
    id,
    email: z.string(),
    name: z.string().nullable(),
    role: z.enum(ROLES),
    active: z.boolean().meta({ description: "False once an admin deactivated the account: none of its tokens, sign-ins or sockets is honoured" }),
    deactivated_at: timestamp.nullable(),
    created_at: timestamp,
  })
  .meta({ id: "User" });

export const userView = (u: UserRow): z.infer<typeof userSchema> => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  active: u.deactivatedAt === null,
  deactivated_at: u.deactivatedAt,
  created_at: u.createdAt,
});

const livenessMinutes = z.int().min(1).max(MAX_LIVENESS_MINUTES).nullable();

export const projectSettingsSchema = z
  .object({
    approve_agent_tasks: z.boolean().meta({
      description: "Tasks created by agents wait for a person's approval (`POST /api/v1/tasks/{id}/approve`) before they are auto-assigned, started or planned",
    }),
    remote_exec: z.boolean().meta({
      description:
        "Any agent in the project may run shell commands in another session of the project (`POST /api/v1/server/remote/exec`) and send it files (`POST /api/v1/server/remote/file-transfer`)",
    }),
    require_result: z.boolean().meta({
      description: "A completion whose result carries no summary and no contract goes to `needs_human` (event `completion_without_result`) instead of `done`",
    }),
    stall_minutes: livenessMinutes.meta({
      description: "A running task with no heartbeat from its server, no note and no progress for this many minutes raises `task_stalled`; null: off",
    }),
    stall_action: z
      .enum(STALL_ACTIONS)
      .meta({ description: "What a stall does besides its event: `alert` only, or `needs_human` (the task also waits on a person)" }),
    unassignable_minutes: livenessMinutes.meta({
      description:
        "A waiting task no server can take (by its requirements) for this many minutes raises `task_unassignable` with each server's reason; null: off",
    }),
    archive_after_days: z.int().min(1).max(MAX_ARCHIVE_DAYS).nullable().meta({
      description:
        "Finished tasks (with their events, dependencies, notes, questions and usage), the permission log and finished webhook deliveries older than this many days move from the database to compressed archives; archived tasks stay readable by id with `archived: true`. Default 30; null: off",
    }),
  })
  .meta({ id: "ProjectSettings", description: "Off by default (archiving after 30 days is on); admins change them (`PATCH /api/v1/projects/{id}`)" });

export const projectSchema = z
  .object({
    id,
    name: z.string(),
    slug: z.string(),
    description: z.string().nullable(),
    settings: projectSettingsSchema,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Project" });

export const projectView = (p: ProjectRow): z.infer<typeof projectSchema> => ({
  id: p.id,
  name: p.name,
  slug: p.slug,
  description: p.description,
  settings: projectSettingsOf(p.settings),
  created_at: p.createdAt,
  updated_at: p.updatedAt,
});

export const tokenPairSchema = z
  .object({
    user: userSchema,
    access_token: z.string().meta({ description: "A JWT: send it as `Authorization: Bearer <jwt>`" }),
    token_type: z.literal("bearer"),
    expires_in: z.int().meta({ description: "Seconds the access token is valid for" }),
    refresh_token: z
      .string()
      .meta({ description: "Opaque (`orr_...`), valid 30 days, spent by its first use: `POST /api/v1/auth/refresh` answers a new pair" }),
  })
  .meta({ id: "TokenPair" });

/** The answer when the refresh token went into the dashboard's cookie instead of the body. */
export const cookieTokenPairSchema = tokenPairSchema
  .omit({ refresh_token: true })
  .meta({ id: "CookieTokenPair", description: "The token pair without its refresh token, which went into the HttpOnly `orc_refresh` cookie" });

/** An action that has nothing else to say. */
export const okSchema = z.object({ status: z.literal("ok") });
