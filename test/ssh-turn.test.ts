import { expect } from "chai";
import { text, tools } from "../testing/fake-provider.js";
import { sshFixture } from "./support/ssh.js";

describe("ssh plugin", () => {
  const { fx, calls } = sshFixture();

  describe("the ssh tool in a turn", () => {
    it("emits bash_confirm; allowed runs once, denied never runs", async () => {
      {
        await fx.d.post("/ssh/add", { name: "web", host: "web.example.com", user: "deploy" });
        const id = await fx.d.createSession({ cwd: fx.project });
        const sse = await fx.d.sse(`/sessions/${id}/events`);
        await sse.waitForType("status");

        fx.fake.script(tools([{ name: "ssh", args: { host: "web", command: "uptime" } }]), text("done"));
        expect((await fx.d.post(`/sessions/${id}/chat`, { text: "check uptime" })).status).to.equal(202);
        const ask = await sse.waitForType("bash_confirm");
        expect(ask.json).to.include({ tool: "ssh", command: "uptime" });
        expect((await fx.d.post(`/sessions/${id}/bash-confirm`, { id: ask.json.id, allow: true })).status).to.equal(
          202,
        );
        const ran = await sse.waitForType("tool_end");
        expect(ran.json.status).to.equal("ok");
        expect(ran.json.result.content).to.include('"deploy@web.example.com","--","uptime"');
        const firstEnd = await sse.waitForType("end");

        const from = sse.frames.indexOf(firstEnd) + 1;
        fx.fake.script(tools([{ name: "ssh", args: { host: "web", command: "reboot" } }]), text("ok"));
        await fx.d.post(`/sessions/${id}/chat`, { text: "reboot it" });
        const ask2 = await sse.waitForType("bash_confirm", 10_000, from);
        expect(ask2.json.command).to.equal("reboot");
        await fx.d.post(`/sessions/${id}/bash-confirm`, { id: ask2.json.id, allow: false });
        const denied = await sse.waitForType("tool_end", 10_000, from);
        expect(denied.json.status).to.equal("error");
        expect(denied.json.result.error.code).to.equal("permission_denied");
        await sse.waitForType("end", 10_000, from);
        expect(calls().map((c) => JSON.parse(c).at(-1))).to.deep.equal(["uptime"]);
        sse.close();
      }
    });
  });
});
