import { PROJECT_ROLES, type Role } from "../db/schema";

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2 };

/** admin ⊇ member ⊇ viewer. */
export const hasRole = (actual: Role, required: Role) => RANK[actual] >= RANK[required];

export { PROJECT_ROLES };
export type ProjectRole = (typeof PROJECT_ROLES)[number];

/**
 * A person's role in a project they belong to: the lower of their own role and the membership's. Admins stay admins
 * everywhere (they manage every project, memberships included, so a membership never locks one out).
 */
export const roleInProject = (global: Role, membership: ProjectRole): Role => (global === "admin" || RANK[global] <= RANK[membership] ? global : membership);
