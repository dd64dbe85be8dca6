/**
 * Ed25519 keys in the formats OpenSSH reads: the `authorized_keys` line
 * (`ssh-ed25519 AAAA… comment`) and the unencrypted `openssh-key-v1` private
 * key file (PROTOCOL.key in OpenSSH's sources), built from the raw 32-byte
 * public key and 32-byte seed.
 */

const KEY_TYPE = "ssh-ed25519";
const MAGIC = "openssh-key-v1\0";
/** The cipher "none" pads the private section to a multiple of 8 bytes. */
const BLOCK = 8;
const LINE = 70;

const encoder = new TextEncoder();

/** Standard base64 (this module also runs in Node, which lacks Uint8Array.prototype.toBase64). */
const base64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));

/** SSH wire encoding: a uint32 length, then the bytes. */
function sshString(bytes: Uint8Array | string): Uint8Array {
  const data = typeof bytes === "string" ? encoder.encode(bytes) : bytes;
  const out = new Uint8Array(4 + data.byteLength);
  new DataView(out.buffer).setUint32(0, data.byteLength);
  out.set(data, 4);
  return out;
}

function uint32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n >>> 0);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

function checkKey(bytes: Uint8Array, what: string) {
  if (bytes.byteLength !== 32) throw new Error(`an Ed25519 ${what} is 32 bytes, not ${bytes.byteLength}`);
}

/** The public key blob: the key type and the 32 bytes. */
const publicBlob = (publicKey: Uint8Array) => concat([sshString(KEY_TYPE), sshString(publicKey)]);

/** The `authorized_keys` line of a public key. */
export function openSshPublicKey(publicKey: Uint8Array, comment: string): string {
  checkKey(publicKey, "public key");
  return `${KEY_TYPE} ${base64(publicBlob(publicKey))}${comment ? ` ${comment}` : ""}`;
}

/**
 * The private key file (PEM-armoured `openssh-key-v1`, no passphrase). `checkInt`
 * is the random number the format repeats twice so that a wrong passphrase shows.
 */
export function openSshPrivateKey(seed: Uint8Array, publicKey: Uint8Array, comment: string, checkInt: number): string {
  checkKey(seed, "seed");
  checkKey(publicKey, "public key");
  const body = [uint32(checkInt), uint32(checkInt), sshString(KEY_TYPE), sshString(publicKey), sshString(concat([seed, publicKey])), sshString(comment)];
  const unpadded = body.reduce((n, p) => n + p.byteLength, 0);
  const padding = Uint8Array.from({ length: (BLOCK - (unpadded % BLOCK)) % BLOCK }, (_, i) => i + 1);
  const file = concat([
    encoder.encode(MAGIC),
    sshString("none"),
    sshString("none"),
    sshString(""),
    uint32(1),
    sshString(publicBlob(publicKey)),
    sshString(concat([...body, padding])),
  ]);
  const b64 = base64(file);
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += LINE) lines.push(b64.slice(i, i + LINE));
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join("\n")}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

/** The seed of an Ed25519 private key exported as PKCS #8 (RFC 8410): the last 32 bytes of its 48. */
export function ed25519SeedOfPkcs8(pkcs8: Uint8Array): Uint8Array {
  if (pkcs8.byteLength !== 48) throw new Error(`an Ed25519 PKCS #8 key is 48 bytes, not ${pkcs8.byteLength}`);
  return pkcs8.slice(16);
}
