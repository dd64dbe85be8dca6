/** src/domain/openssh-keys.ts: a grant's key pair as OpenSSH itself reads it (`ssh-keygen -y` derives the public line from the private file). */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ed25519SeedOfPkcs8, openSshPrivateKey, openSshPublicKey } from "../src/domain/openssh-keys";

const dir = mkdtempSync(join(tmpdir(), "openssh-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function keyPair() {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const publicKey = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  const seed = ed25519SeedOfPkcs8(new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer));
  return { publicKey, seed };
}

describe("OpenSSH Ed25519 keys", () => {
  it("ssh-keygen reads the private key file and derives from it the same public line", async () => {
    for (const comment of ["orchestratia-grant-1", "a comment of another length", ""]) {
      const { publicKey, seed } = await keyPair();
      const file = join(dir, `key-${comment.length}`);
      const privateKey = openSshPrivateKey(seed, publicKey, comment, 0x1234abcd);
      expect(privateKey).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n([A-Za-z0-9+/=]{1,70}\n)+-----END OPENSSH PRIVATE KEY-----\n$/);
      writeFileSync(file, privateKey, { mode: 0o600 });
      const derived = execFileSync("ssh-keygen", ["-y", "-f", file], { encoding: "utf8" }).trim();
      expect(derived).toBe(openSshPublicKey(publicKey, comment));
      // The public line alone is a key ssh-keygen fingerprints as ED25519.
      writeFileSync(`${file}.pub`, `${openSshPublicKey(publicKey, comment)}\n`);
      expect(execFileSync("ssh-keygen", ["-l", "-f", `${file}.pub`], { encoding: "utf8" })).toMatch(/^256 SHA256:\S+ .*\(ED25519\)\n$/);
    }
  });

  it("signs with the key the file holds: ssh-keygen's signature verifies against the public line", async () => {
    const { publicKey, seed } = await keyPair();
    const file = join(dir, "signer");
    writeFileSync(file, openSshPrivateKey(seed, publicKey, "signer", 7), { mode: 0o600 });
    writeFileSync(join(dir, "message"), "hello");
    execFileSync("ssh-keygen", ["-Y", "sign", "-f", file, "-n", "file", join(dir, "message")]);
    writeFileSync(join(dir, "allowed"), `signer ${openSshPublicKey(publicKey, "")}\n`);
    const verified = execFileSync("ssh-keygen", ["-Y", "verify", "-f", join(dir, "allowed"), "-I", "signer", "-n", "file", "-s", join(dir, "message.sig")], {
      input: "hello",
      encoding: "utf8",
    });
    expect(verified).toMatch(/Good "file" signature for signer/);
  });

  it("refuses keys of the wrong length", () => {
    expect(() => openSshPublicKey(new Uint8Array(31), "x")).toThrow(/32 bytes/);
    expect(() => openSshPrivateKey(new Uint8Array(32), new Uint8Array(33), "x", 1)).toThrow(/32 bytes/);
    expect(() => ed25519SeedOfPkcs8(new Uint8Array(47))).toThrow(/48 bytes/);
  });
});
