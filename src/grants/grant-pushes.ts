/**
 * The frames hub.py reads for grants (`ws_receive_loop`): the target's daemon
 * installs or removes the public key (`setup_ssh_access`, `revoke_ssh_access`),
 * the source's stores the private key and listens, or stops (`grant_ssh_access`,
 * `revoke_grant_access`).
 */
import type { DaemonPush } from "../server-link/pushes";
import type { GrantRow } from "./grant-store";

export const setupPush = (g: GrantRow): DaemonPush => ({
  type: "setup_ssh_access",
  grant_id: g.id,
  ssh_public_key: g.public_key,
  privilege_level: g.privilege_level,
  target_port: g.target_port,
});

export const grantPush = (g: GrantRow, privateKey: string): DaemonPush => ({
  type: "grant_ssh_access",
  grant_id: g.id,
  ssh_private_key: privateKey,
  local_bind_port: g.local_bind_port,
  target_port: g.target_port,
  privilege_level: g.privilege_level,
  ssh_username: g.ssh_username,
});

export const revokeTargetPush = (grantId: string): DaemonPush => ({ type: "revoke_ssh_access", grant_id: grantId });
export const revokeSourcePush = (grantId: string): DaemonPush => ({ type: "revoke_grant_access", grant_id: grantId });
