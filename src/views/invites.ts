import { z } from "zod";
import { PROJECT_ROLES, ROLES, type invites } from "../db/schema";
import { id, timestamp } from "./fields";

type InviteRow = typeof invites.$inferSelect;

const projectRole = z.enum(PROJECT_ROLES);

export const invitedProjectSchema = z.object({ project_id: id, name: z.string(), role: projectRole }).meta({ id: "InvitedProject" });

export const inviteSchema = z
  .object({
    id,
    role: z.enum(ROLES),
    projects: z.array(invitedProjectSchema).meta({ description: "The projects the new person joins, each with their role there (a deleted one is left out)" }),
    email: z.string().nullable().meta({ description: "Only this address may accept; null: anyone with the link" }),
    expires_at: timestamp,
    created_at: timestamp,
    created_by: id.nullable(),
  })
  .meta({ id: "Invite" });

export const newInviteSchema = inviteSchema
  .extend({
    token: z.string().meta({ description: "Shown once (the hub keeps only its digest); the link carries it" }),
    url: z.string().meta({ description: "The dashboard's page that accepts the invite, with the token: hand this to the person" }),
  })
  .meta({ id: "NewInvite" });

/** What the link shows before it is accepted: enough to decide, nothing about who made it. */
export const invitePreviewSchema = z
  .object({
    role: z.enum(ROLES),
    projects: z.array(z.object({ id, name: z.string(), role: projectRole })),
    email: z.string().nullable().meta({ description: "The address the invite is for, if it names one" }),
    expires_at: timestamp,
  })
  .meta({ id: "InvitePreview" });

/** The invite's projects that still exist, by name. */
export const invitedProjects = (row: InviteRow, names: ReadonlyMap<string, string>) =>
  row.projects.flatMap((p) => {
    const name = names.get(p.project_id);
    return name === undefined ? [] : [{ project_id: p.project_id, name, role: p.role }];
  });

export const inviteView = (row: InviteRow, names: ReadonlyMap<string, string>): z.infer<typeof inviteSchema> => ({
  id: row.id,
  role: row.role,
  projects: invitedProjects(row, names),
  email: row.email,
  expires_at: row.expiresAt,
  created_at: row.createdAt,
  created_by: row.createdBy,
});
