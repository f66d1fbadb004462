import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { copyPackage, HELLO_EXAMPLE, linkDevDependencies, REPO, sh } from "./support/plugin-package.js";

const MAIN = fileURLToPath(new URL("../host/main.js", import.meta.url));
const read = (rel: string) => readFileSync(join(REPO, rel), "utf8");

/** The example's own files (not what `npm install` or a build left in it). */
function exampleFiles(): string[] {
  return readdirSync(HELLO_EXAMPLE, { withFileTypes: true })
    .filter((f) => f.isFile() && f.name !== "package-lock.json")
    .map((f) => f.name)
    .sort();
}

describe("examples/hello-plugin", () => {
  it("is exactly what `agentd plugin new hello` writes, but for its agentd dev dependency (file:../..)", async function () {
    this.timeout(60_000); // the CLI is a process
    const work = mkdtempSync(join(tmpdir(), "agentd-scaffold-"));
    try {
      const made = await sh(process.execPath, [MAIN, "--home", work, "plugin", "new", "hello", "--dir", work], work);
      expect(made.code, made.stderr).to.equal(0);
      const generated = join(work, "hello");
      const files = readdirSync(generated).sort();
      expect(exampleFiles()).to.deep.equal(files);
      for (const f of files) {
        let text = readFileSync(join(generated, f), "utf8");
        if (f === "package.json") {
          // The scaffold links the agentd that made it by its absolute path; the example links this checkout relatively.
          const own = `"agentd": ${JSON.stringify(`file:${REPO}`)}`;
          expect(text).to.include(own);
          text = text.replace(own, '"agentd": "file:../.."');
        }
        expect(
          readFileSync(join(HELLO_EXAMPLE, f), "utf8"),
          `examples/hello-plugin/${f} is not what \`agentd plugin new hello\` writes: regenerate it (\`node dist/host/main.js ` +
            "plugin new hello --dir DIR`, then copy DIR/hello's files there, keeping the dev dependency file:../..)",
        ).to.equal(text);
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it("builds against this checkout and passes its own test (npm test, offline)", async function () {
    this.timeout(120_000); // tsc and node --test, each a process
    const dir = copyPackage(HELLO_EXAMPLE);
    try {
      linkDevDependencies(dir);
      const tested = await sh("npm", ["test"], dir);
      expect(tested.code, tested.stdout + tested.stderr).to.equal(0);
      expect(tested.stdout)
        .to.match(/# pass 4\n/)
        .and.match(/# fail 0\n/);
      expect(existsSync(join(dir, "dist", "index.js"))).to.equal(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is what the README shows: its package.json, plugin and test, as they are", () => {
    const readme = read("README.md");
    const start = readme.indexOf("## Writing a plugin");
    const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
    const blocks = [...section.matchAll(/```(?:json|ts)\n([\s\S]*?)```/g)].map((m) => m[1]);
    for (const f of ["package.json", "index.ts", "index.test.ts"]) {
      expect(blocks, `README's "Writing a plugin" must show examples/hello-plugin/${f} as it is`).to.include(
        read(`examples/hello-plugin/${f}`),
      );
    }
  });

  it("is what the guide's testing section calls", () => {
    const guide = read("docs/plugins.md");
    const start = guide.indexOf("## Testing a plugin");
    const section = guide.slice(start, guide.indexOf("\n## ", start + 1));
    const testing = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]).join("\n");
    const test = read("examples/hello-plugin/index.test.ts");
    for (const call of [
      'h.callTool("hello_greet", { name: "Ada" })',
      'h.inject("GET", "/plugins/hello/greeting?name=Ada")',
      "startPluginHarness(plugin, { grant: [] })",
    ]) {
      expect(testing, call).to.include(call);
    }
    expect(test).to.include('{ greeting: "Hi, Ada!" }');
    expect(testing).to.include('{ greeting: "Hi, Ada!" }');
  });
});
