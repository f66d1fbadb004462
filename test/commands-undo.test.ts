import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { text, tools } from "../testing/fake-provider.js";
import { commandsFixture, gitIn, type Json, userTexts } from "./support/commands.js";

describe("slash commands (commands plugin)", function () {
  this.timeout(30_000);
  const { fx, command, chatTurn, session } = commandsFixture();

  describe("/undo", () => {
    /** One turn writing `a.txt` (modify) and `new/b.txt` (create), then a final answer. */
    async function writingTurn(extra: Array<{ path: string; content: string }> = []) {
      fx.fake.script(
        tools([
          { name: "write", args: { path: "a.txt", content: "changed\n" } },
          { name: "write", args: { path: "new/deep/b.txt", content: "created\n" } },
          ...extra.map((args) => ({ name: "write", args })),
        ]),
        text("done"),
      );
      const end = await chatTurn("edit the files");
      expect(end.reason).to.equal("stop");
      expect(readFileSync(join(fx.project, "a.txt"), "utf8")).to.equal("changed\n");
      expect(existsSync(join(fx.project, "new/deep/b.txt"))).to.equal(true);
    }

    async function undoesFilesAndMessages() {
      const refused = await command("/undo");
      expect(refused.status).to.equal(409);
      expect(refused.body.code).to.equal("undo_needs_force");
      expect(refused.body.createdFiles).to.deep.equal(["new/deep/b.txt"]);
      expect(refused.body.error).to.include("/undo --force");
      expect(readFileSync(join(fx.project, "a.txt"), "utf8")).to.equal("changed\n");

      const res = await command("/undo --force");
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ undone: true, filesRestored: true });
      expect(res.body.data.restored).to.deep.equal(["a.txt"]);
      expect(res.body.data.removed).to.deep.equal(["new/deep/b.txt"]);
      expect(readFileSync(join(fx.project, "a.txt"), "utf8")).to.equal("original\n");
      expect(existsSync(join(fx.project, "new"))).to.equal(false);
      const view = await session();
      expect(view.messages).to.deep.equal([]);
      expect(view.messageCount).to.equal(0);
      await fx.sse.waitForType("undo");
      const again = await command("/undo");
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.include({ message: "Nothing to undo" });
      expect(again.body.data).to.deep.equal({ undone: false });
    }

    it("restores modified files and removes created ones outside git (--force flow)", async () => {
      writeFileSync(join(fx.project, "a.txt"), "original\n");
      await writingTurn();
      await undoesFilesAndMessages();
    });

    it("works in a git repository without touching its index, and leaves ignored files alone", async () => {
      writeFileSync(join(fx.project, "a.txt"), "original\n");
      writeFileSync(join(fx.project, ".gitignore"), "*.log\n");
      gitIn(fx.project, "init", "-q", "-b", "main");
      gitIn(fx.project, "add", "-A");
      gitIn(fx.project, "commit", "-q", "-m", "init");
      writeFileSync(join(fx.project, "staged.txt"), "staged\n");
      gitIn(fx.project, "add", "staged.txt");
      const statusBefore = gitIn(fx.project, "status", "--porcelain");
      await writingTurn([{ path: "build.log", content: "ignored output\n" }]);
      await undoesFilesAndMessages();
      expect(readFileSync(join(fx.project, "build.log"), "utf8")).to.equal("ignored output\n");
      rmSync(join(fx.project, "build.log"));
      expect(gitIn(fx.project, "status", "--porcelain")).to.equal(statusBefore);
      expect(gitIn(fx.project, "log", "--oneline")).to.match(/^[0-9a-f]+ init\n$/);
    });

    it("undoes only the last turn and needs no --force when no file was created", async () => {
      writeFileSync(join(fx.project, "a.txt"), "v0\n");
      fx.fake.script(tools([{ name: "write", args: { path: "a.txt", content: "v1\n" } }]), text("one"));
      await chatTurn("first");
      fx.fake.script(tools([{ name: "write", args: { path: "a.txt", content: "v2\n" } }]), text("two"));
      await chatTurn("second");
      fx.fake.script(text("just talking"));
      await chatTurn("third, no tools");

      const talk = await command("/undo");
      expect(talk.body.data).to.include({ undone: true, filesRestored: false });
      expect(readFileSync(join(fx.project, "a.txt"), "utf8")).to.equal("v2\n");
      expect(userTexts((await session()).messages)).to.deep.equal(["first", "second"]);

      const res = await command("/undo");
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ undone: true, filesRestored: true });
      expect(readFileSync(join(fx.project, "a.txt"), "utf8")).to.equal("v1\n");
      expect(userTexts((await session()).messages)).to.deep.equal(["first"]);

      // The conversation continues from the restored point.
      fx.fake.script(text("again"));
      const before = fx.fake.requests.length;
      await chatTurn("retry");
      const sent = JSON.stringify((fx.fake.requests[before] as Json).messages);
      expect(sent).to.include("first").and.not.include("second");
    });

    it("refuses /undo with bad flags and drops checkpoints with the session", async () => {
      expect((await command("/undo --hard")).status).to.equal(400);
      writeFileSync(join(fx.project, "a.txt"), "original\n");
      await writingTurn();
      const dir = join(fx.d.home, "plugins-data", "commands", "checkpoints", fx.id);
      expect(existsSync(dir)).to.equal(true);
      fx.sse.close();
      expect((await fx.d.delete(`/sessions/${fx.id}/permanent`)).status).to.equal(200);
      expect(existsSync(dir)).to.equal(false);
    });
  });
});
