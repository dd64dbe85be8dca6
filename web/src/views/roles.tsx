/** Choosing a role: a person's own (admin, member, viewer), or theirs in one project (member or viewer, never more than their own). */
import type { Member, Role } from "../types";

export type ProjectRole = Member["project_role"];

export const ROLE_NOTES: Record<Role, string> = {
  admin: "admin: sees and does everything",
  member: "member: reads and writes their projects",
  viewer: "viewer: only reads their projects",
};

export function RoleSelect({ value, onChange }: { value: Role; onChange: (role: Role) => void }) {
  return (
    <label>
      Role
      <select name="role" value={value} onChange={(e) => onChange(e.currentTarget.value as Role)}>
        {(Object.entries(ROLE_NOTES) as [Role, string][]).map(([r, note]) => (
          <option key={r} value={r}>
            {note}
          </option>
        ))}
      </select>
    </label>
  );
}

export function ProjectRoleSelect({ value, onChange, label }: { value: ProjectRole; onChange: (role: ProjectRole) => void; label: string }) {
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.currentTarget.value as ProjectRole)}>
      <option value="member">member</option>
      <option value="viewer">viewer (reads only)</option>
    </select>
  );
}
