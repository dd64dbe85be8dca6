import type { ProjectRow, UserRow } from "../db/client";

export const userView = (u: UserRow) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  created_at: u.createdAt,
});

export const projectView = (p: ProjectRow) => ({
  id: p.id,
  name: p.name,
  slug: p.slug,
  description: p.description,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
});
