import { z } from "zod";
import type { ProjectRow, UserRow } from "../db/client";
import { ROLES } from "../db/schema";
import { id, timestamp } from "./fields";

export const userSchema = z.object({ id, email: z.string(), name: z.string().nullable(), role: z.enum(ROLES), created_at: timestamp }).meta({ id: "User" });

export const userView = (u: UserRow): z.infer<typeof userSchema> => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  created_at: u.createdAt,
});

export const projectSchema = z
  .object({ id, name: z.string(), slug: z.string(), description: z.string().nullable(), created_at: timestamp, updated_at: timestamp })
  .meta({ id: "Project" });

export const projectView = (p: ProjectRow): z.infer<typeof projectSchema> => ({
  id: p.id,
  name: p.name,
  slug: p.slug,
  description: p.description,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
});
