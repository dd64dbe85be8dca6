/** A grant's Ed25519 key pair, made with WebCrypto and written in the formats OpenSSH reads (src/domain/openssh-keys.ts). */
import { ed25519SeedOfPkcs8, openSshPrivateKey, openSshPublicKey } from "../domain/openssh-keys";

export async function sshKeyPair(comment: string): Promise<{ publicKey: string; privateKey: string }> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const publicKey = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  const seed = ed25519SeedOfPkcs8(new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer));
  const checkInt = crypto.getRandomValues(new Uint32Array(1))[0]!;
  return { publicKey: openSshPublicKey(publicKey, comment), privateKey: openSshPrivateKey(seed, publicKey, comment, checkInt) };
}
