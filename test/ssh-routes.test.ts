import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { ENCRYPTED_RSA, MARKER, OPENSSH_KEY, sshFixture } from "./support/ssh.js";

describe("ssh plugin", () => {
  const { fx } = sshFixture();

  describe("POST /ssh/key", () => {
    it("stores the key with mode 0600 under a sanitised name, and never echoes or logs it", async () => {
      const res = await fx.d.post("/ssh/key", { name: "../../my key/id", key: OPENSSH_KEY });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ ok: true, name: "_.._my_key_id", format: "openssh" });
      const keysDir = join(realpathSync(fx.d.home), "ssh", "keys");
      expect(res.body.path).to.equal(join(keysDir, "_.._my_key_id"));
      expect(statSync(res.body.path).mode & 0o777).to.equal(0o600);
      expect(statSync(keysDir).mode & 0o777).to.equal(0o700);
      expect(statSync(join(fx.d.home, "ssh")).mode & 0o777).to.equal(0o700);
      expect(readFileSync(res.body.path, "utf8")).to.equal(`${OPENSSH_KEY.replace(/\r\n/g, "\n")}\n`);
      expect(res.text).to.not.include(MARKER);

      const again = await fx.d.post("/ssh/key", { name: "deploy", key: ENCRYPTED_RSA });
      expect(again.body).to.include({ name: "deploy", format: "rsa" });
      await fx.d.stop();
      const logText = readFileSync(join(fx.d.home, "agentd.log"), "utf8");
      expect(logText).to.include("ssh key stored");
      expect(logText).to.not.include(MARKER);
      expect(logText).to.not.include("MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun");
    });

    it("answers 400 for public keys, garbage, bad names and bad bodies, without quoting the key", async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ name: "k", key: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${MARKER} me@host` }, /public key/],
        [{ name: "k", key: `-----BEGIN PUBLIC KEY-----\n${MARKER}\n-----END PUBLIC KEY-----` }, /public key/],
        [{ name: "k", key: `not a key ${MARKER}` }, /private key/],
        [
          { name: "k", key: `-----BEGIN OPENSSH PRIVATE KEY-----\n${MARKER}\n-----END RSA PRIVATE KEY-----` },
          /private key/,
        ],
        [{ name: "...", key: OPENSSH_KEY }, /name/],
        [{ name: "", key: OPENSSH_KEY }, /name/],
        [{ key: OPENSSH_KEY }, /name/],
        [{ name: "k" }, /key/],
        [{ name: "k", key: 42 }, /key/],
        [{ name: "k", key: OPENSSH_KEY, mode: "0644" }, /mode/],
      ];
      for (const [body, msg] of cases) {
        const res = await fx.d.post("/ssh/key", body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).to.equal(400);
        expect(res.body.error).to.match(msg);
        expect(res.text).to.not.include(MARKER);
      }
      const raw = await fx.d.request("POST", "/ssh/key", undefined, { raw: "{nope" });
      expect(raw.status).to.equal(400);
      expect(existsSync(join(fx.d.home, "ssh", "keys"))).to.equal(false);
    });
  });

  describe("POST /ssh/add", () => {
    it("adds and replaces hosts in hosts.json (0600)", async () => {
      await fx.d.post("/ssh/key", { name: "deploy", key: OPENSSH_KEY });
      const res = await fx.d.post("/ssh/add", {
        name: "web",
        host: "web.example.com",
        user: "deploy",
        port: 2222,
        key: "deploy",
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        ok: true,
        host: { name: "web", host: "web.example.com", user: "deploy", port: 2222, key: "deploy" },
      });
      const cast = await fx.d.post("/ssh/add", { name: "db", host: "[::1]", username: "pg" });
      expect(cast.body.host).to.deep.equal({ name: "db", host: "::1", user: "pg", port: 22 });
      const keyPath = join(fx.d.home, "ssh", "keys", "deploy");
      const byPath = await fx.d.post("/ssh/add", { name: "bypath", host: "h1", keyPath });
      expect(byPath.body.host.keyPath).to.equal(realpathSync(keyPath));
      await fx.d.post("/ssh/add", { name: "bypath", host: "h1" });
      await fx.d.post("/ssh/add", { name: "web", host: "10.0.0.2" });
      const file = join(fx.d.home, "ssh", "hosts.json");
      expect(statSync(file).mode & 0o777).to.equal(0o600);
      const stored = JSON.parse(readFileSync(file, "utf8")).hosts;
      expect(stored).to.deep.equal([
        { name: "db", host: "::1", user: "pg", port: 22 },
        { name: "bypath", host: "h1", port: 22 },
        { name: "web", host: "10.0.0.2", port: 22 },
      ]);
    });

    it("refuses unsafe or invalid fields with 400", async () => {
      const ok = { name: "web", host: "web.example.com" };
      const bad: Array<Record<string, unknown>> = [
        { ...ok, port: 0 },
        { ...ok, port: 65536 },
        { ...ok, port: "22" },
        { ...ok, port: 22.5 },
        { ...ok, host: "web example.com" },
        { ...ok, host: "web.example.com;rm -rf ~" },
        { ...ok, host: "-oProxyCommand=touch /tmp/pwned" },
        { ...ok, host: "$(id)" },
        { ...ok, host: "a`id`" },
        { ...ok, host: "" },
        { ...ok, user: "-l" },
        { ...ok, user: "root; id" },
        { ...ok, user: "a b" },
        { ...ok, name: "../x" },
        { ...ok, name: "-x" },
        { ...ok, key: "missing" },
        { ...ok, keyPath: "/etc/passwd" },
        { ...ok, key: "x", keyPath: "/x" },
        { ...ok, user: "a", username: "b" },
        { ...ok, password: "hunter2" },
        { ...ok, extra: true },
        { host: "web.example.com" },
        { name: "web" },
      ];
      for (const body of bad) {
        const res = await fx.d.post("/ssh/add", body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error, JSON.stringify(body)).to.be.a("string").that.is.not.empty;
        expect(res.text).to.not.include("hunter2");
      }
      expect(existsSync(join(fx.d.home, "ssh", "hosts.json"))).to.equal(false);
    });
  });
});
