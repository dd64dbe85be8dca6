/**
 * Registering under a name that exists re-keys that server (its old key stops
 * working), so the caller must prove it is that server: the same machine (the
 * official daemon always sends /etc/machine-id or its equivalent), or the
 * server's current API key. An admin may re-key any server. Anyone else's
 * registration token must also cover every project the server serves.
 */
export interface RekeyProof {
  byAdmin: boolean;
  tokenCovers: boolean;
  /** Both the server on record and this registration name their machine, and the two differ. */
  otherMachine: boolean;
  sameMachine: boolean;
  currentKey: boolean;
}

/** Why this registration may not re-key the server named `name`, or null when it may. */
export function rekeyRefusal(name: string, proof: RekeyProof): string | null {
  if (proof.byAdmin) return null;
  const taken = `A server named "${name}" is already registered`;
  if (!proof.tokenCovers) return `${taken} for projects this registration token does not cover; choose another name or ask an admin`;
  if (proof.sameMachine || proof.currentKey) return null;
  if (proof.otherMachine) return `${taken} from another machine; choose another name or ask an admin to re-key it`;
  return `${taken}; to re-key it, register from the same machine (the same machine_id), send its current API key as X-API-Key, or ask an admin`;
}
