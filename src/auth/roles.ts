import type { Role } from "../db/schema";

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2 };

/** admin ⊇ member ⊇ viewer. */
export const hasRole = (actual: Role, required: Role) => RANK[actual] >= RANK[required];
