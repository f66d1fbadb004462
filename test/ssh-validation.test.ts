import { expect } from "chai";
import { normalisePrivateKey, sanitiseKeyName } from "../plugins/ssh/index.js";
import { ENCRYPTED_RSA, OPENSSH_KEY } from "./support/ssh.js";

describe("ssh validation helpers", () => {
  it("sanitises key names to plain file names", () => {
    expect(sanitiseKeyName("id_ed25519")).to.equal("id_ed25519");
    expect(sanitiseKeyName(" my key ")).to.equal("my_key");
    expect(sanitiseKeyName("../../etc/passwd")).to.equal("_.._etc_passwd");
    expect(sanitiseKeyName(".hidden")).to.equal("hidden");
    expect(sanitiseKeyName("-rf")).to.equal("rf");
    expect(sanitiseKeyName("ключ-1")).to.equal("____-1");
    expect(() => sanitiseKeyName("..")).to.throw(/name/);
  });

  it("normalises private keys and tells public keys apart", () => {
    expect(normalisePrivateKey(OPENSSH_KEY).key.endsWith("-----END OPENSSH PRIVATE KEY-----\n")).to.equal(true);
    expect(normalisePrivateKey(ENCRYPTED_RSA).format).to.equal("rsa");
    expect(() => normalisePrivateKey("ssh-rsa AAAAB3NzaC1yc2E me@x")).to.throw(/public key/);
  });
});
