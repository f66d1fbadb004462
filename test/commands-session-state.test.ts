import { expect } from "chai";
import { EventBusToken } from "../core/index.js";
import { text, tools } from "../testing/fake-provider.js";
import { commandsFixture, gitIn, type Json, userTexts } from "./support/commands.js";

describe("slash commands (commands plugin)", function () {
  this.timeout(30_000);
  const { fx, command, global, chatTurn, session } = commandsFixture();

  describe("session state", () => {
    it("/turn-cap shows, sets (10..10000) and resets the session cap", async () => {
      expect((await command("/turn-cap")).body.data).to.deep.equal({ turnCap: null, default: 500, effective: 500 });
      expect((await command("/turn-cap 120")).body.data).to.include({ turnCap: 120, effective: 120 });
      expect((await command("/turn-cap")).body.data).to.include({ turnCap: 120 });
      for (const bad of ["9", "10001", "abc", "12.5"])
        expect((await command(`/turn-cap ${bad}`)).status, bad).to.equal(400);
      expect((await command("/turn-cap reset")).body.data).to.include({ turnCap: null, effective: 500 });
    });

    it("the loop stops at the /turn-cap value", async () => {
      await command("/turn-cap 10");
      fx.fake.script(...Array.from({ length: 12 }, () => tools([{ name: "ls", args: {} }])));
      const before = fx.fake.requests.length;
      await chatTurn("loop");
      expect(fx.fake.requests.length - before).to.equal(10);
      expect(fx.sse.ofType("notice").some((f) => /iteration cap \(10\)/.test(f.json.message))).to.equal(true);
    });

    it("/plan and /build switch the mode; /permissions switches the gate", async () => {
      expect((await command("/plan")).body.data).to.deep.equal({ mode: "plan" });
      expect((await session()).mode).to.equal("plan");
      expect((await command("/build")).body.data).to.deep.equal({ mode: "build" });
      expect((await session()).mode).to.equal("build");
      expect((await command("/permissions")).body.data.permissionMode).to.equal("default");
      expect((await command("/permissions bypass")).body.data.permissionMode).to.equal("bypass");
      expect((await command("/permissions")).body.data.permissionMode).to.equal("bypass");
      expect((await command("/permissions sometimes")).status).to.equal(400);
      expect((await command("/permissions default")).body.data.permissionMode).to.equal("default");
    });

    it("/fork creates an independent session with the current context", async () => {
      fx.fake.script(text("answer"));
      await chatTurn("question");
      const res = await command("/fork");
      expect(res.status).to.equal(200);
      const forkId = res.body.data.sessionId as string;
      expect(forkId).to.be.a("string").and.not.equal(fx.id);
      // As cast's daemon answers (its client reads result.sessionId), with the readable text kept beside it.
      expect(res.body.result).to.deep.equal({ sessionId: forkId, message: `Forked into ${forkId}` });
      expect(res.body.message).to.equal(`Forked into ${forkId}`);
      const fork = (await fx.d.get<Json>(`/sessions/${forkId}`)).body;
      expect(userTexts(fork.messages)).to.deep.equal(["question"]);
      expect(fork.cwd).to.equal(fx.project);
      expect((await command("/undo", forkId)).body.result).to.equal("Nothing to undo");
    });

    it("/clear empties the model's context but keeps the history", async () => {
      fx.fake.script(text("one"), text("two"));
      await chatTurn("first message");
      const res = await command("/clear");
      expect(res.body.data).to.deep.equal({ originalTask: "first message" });
      const before = fx.fake.requests.length;
      await chatTurn("second message");
      const sent = JSON.stringify((fx.fake.requests[before] as Json).messages);
      expect(sent).to.include("second message").and.not.include("first message");
      expect(userTexts((await session()).messages)).to.deep.equal(["first message", "second message"]);
    });

    it("/compact summarises older turns through the provider", async () => {
      fx.fake.script(text("a1"), text("a2"), text("SUMMARY OF EARLIER WORK"));
      await chatTurn("u1");
      await chatTurn("u2");
      const res = await command("/compact");
      expect(res.status).to.equal(200);
      expect(res.body.data.compacted).to.equal(true);
      await fx.sse.waitForType("compaction");
      fx.fake.script(text("a3"));
      const before = fx.fake.requests.length;
      await chatTurn("u3");
      const sent = JSON.stringify((fx.fake.requests[before] as Json).messages);
      expect(sent).to.include("SUMMARY OF EARLIER WORK").and.not.include('"u1"');
    });

    it("/model, /persona, /provider and /reasoning show and set session settings", async () => {
      fx.fake.setModels(["fake-model", "other-model"]);
      const models = await command("/model");
      expect(models.body.data).to.deep.include({ model: "fake-model", models: ["fake-model", "other-model"] });
      expect(models.body.result).to.include("● fake-model").and.include("other-model");
      expect((await command("/model other-model")).body.data).to.deep.equal({ model: "other-model" });
      expect((await session()).model).to.equal("other-model");
      const typo = await command("/model other-modle");
      expect(typo.status).to.equal(400);
      expect(typo.body.error).to.include('Unknown model "other-modle"');
      expect((await session()).model).to.equal("other-model");
      fx.fake.setModels(["fake-model"]);

      const personas = (await command("/persona")).body.data;
      expect(personas.personas.length).to.be.greaterThan(0);
      expect((await command("/persona no-such-persona")).status).to.equal(400);
      const target = personas.personas.at(-1).name as string;
      expect((await command(`/persona ${target}`)).status).to.equal(200);
      expect((await session()).persona).to.equal(target);

      const providers = (await command("/provider")).body.data;
      expect(providers.providers.length).to.be.greaterThan(0);
      expect((await command("/provider nope")).status).to.equal(400);

      expect((await command("/reasoning high")).body.data.reasoning).to.equal("high");
      expect((await command("/reasoning")).body.data.reasoning).to.equal("high");
      expect((await command("/reasoning extreme")).status).to.equal(400);
      fx.fake.script(text("ok"));
      const before = fx.fake.requests.length;
      await chatTurn("think");
      const req = fx.fake.requests[before] as Json;
      expect(req.model).to.equal("other-model");
      expect((await command("/reasoning reset")).body.data.reasoning).to.equal(null);
    });

    it("/reload re-scans project resources and announces it", async () => {
      const seen: Json[] = [];
      fx.d.daemon.services.get(EventBusToken).on("resources.reload", (e) => seen.push(e));
      const res = await command("/reload");
      expect(res.status).to.equal(200);
      expect(seen).to.deep.equal([{ type: "resources.reload", cwd: fx.project, sessionId: fx.id }]);
      await fx.sse.waitForType("resources_reloaded");
      expect((await global("/reload")).status).to.equal(200);
      expect(seen).to.have.length(2);
    });

    it("informational commands answer with lists or a clear message", async () => {
      for (const line of ["/skills", "/mcp", "/hooks", "/rules", "/web", "/ssh", "/theme", "/worktree", "/help"]) {
        const res = await command(line);
        expect(res.status, line).to.equal(200);
        expect(res.body.result, line).to.be.a("string").and.not.equal("");
      }
      expect((await command("/theme no-such-theme")).status).to.equal(400);
      expect((await command("/repo")).body.data).to.deep.equal({ cwd: fx.project, isGit: false });
      gitIn(fx.project, "init", "-q", "-b", "main");
      gitIn(fx.project, "commit", "-q", "--allow-empty", "-m", "init");
      const repo = (await command("/repo")).body.data;
      expect(repo).to.include({ isGit: true, branch: "main", dirty: false });
      const wt = (await command("/worktree")).body.data.worktrees;
      expect(wt).to.have.length(1);
      expect(wt[0]).to.include({ path: fx.project, branch: "main" });
    });
  });
});
