import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { CliIo } from "./commands.js";

const NAME_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** This agentd's package folder (from dist/host/plugin-cli/): the scaffold's dev dependency links to it. */
const AGENTD_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * `agentd plugin new <name>`: a plugin package with a typed tool, a route, a test that runs it through the real
 * loader (`agentd/testing`, with node:test) and a README. `npm install && npm test` passes as generated. Its manifest
 * is written once, in package.json. examples/hello-plugin is what `agentd plugin new hello` writes (a test checks it).
 */
export function scaffoldPlugin(name: string, opts: { dir?: string; agentdVersion: string }, io: CliIo): number {
  if (!NAME_RE.test(name)) {
    io.err(`"${name}" is not a valid plugin id: use lowercase letters, digits and dashes (max 64)\n`);
    return 1;
  }
  const target = resolve(opts.dir ?? process.cwd(), name);
  if (existsSync(target) && readdirSync(target).length > 0) {
    io.err(`${target} already exists and is not empty\n`);
    return 1;
  }
  mkdirSync(target, { recursive: true });
  for (const [file, text] of Object.entries(files(name, opts.agentdVersion))) {
    writeFileSync(join(target, file), text);
  }
  const rel = relative(process.cwd(), target) || ".";
  io.out(
    `Created ${target}\n\nNext:\n  cd ${rel}\n  npm install\n  npm test\n  agentd plugin add ${rel.startsWith(".") || rel.startsWith("/") ? rel : `./${rel}`}\n`,
  );
  return 0;
}

function files(name: string, agentdVersion: string): Record<string, string> {
  const tool = `${name.replace(/-/g, "_")}_greet`;
  const description = `The ${name} agentd plugin: a greeting tool and a greeting route`;
  const pkg = {
    name,
    version: "0.1.0",
    description,
    type: "module",
    main: "dist/index.js",
    files: ["dist"],
    scripts: { build: "tsc -p .", test: "tsc -p . && node --test dist/" },
    // The manifest: agentd reads it before it imports the code, which does not repeat it.
    agentd: { id: name, version: "0.1.0", description, capabilities: ["routes"] },
    peerDependencies: { agentd: `>=${agentdVersion}` },
    // The agentd that generated it (the npm name "agentd" belongs to another package).
    devDependencies: { agentd: `file:${AGENTD_ROOT}`, typescript: "7.0.2", "@types/node": "20.19.43" },
  };
  const tsconfig = `{
  "compilerOptions": {
    "target": "es2022",
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "strict": true,
    "outDir": "dist",
    "rootDir": ".",
    "skipLibCheck": true,
    "types": ["node"]
  },
  "include": ["*.ts"]
}
`;
  const index = `import { definePlugin, defineRoute, defineTool, T } from "agentd";

/** \`pluginOptions.${name}\` in the agentd config: validated (defaults applied) before \`register\`. */
const Options = T.Object({ greeting: T.String({ default: "Hello", minLength: 1, maxLength: 40 }) });

// Its manifest (id, version, description, capabilities) is the "agentd" key of package.json.
export default definePlugin({
  options: Options,
  register(ctx) {
    // \`ctx.options\` is typed from Options.
    const greet = (name: string) => \`\${ctx.options.greeting}, \${name}!\`;
    ctx.tools.add(
      defineTool({
        name: "${tool}",
        description: "Greets someone by name",
        parameters: T.Object({ name: T.String({ minLength: 1, maxLength: 100, description: "Who to greet" }) }),
        readOnly: true,
        // \`name\` is typed from the schema and already checked against it.
        execute: async ({ name }) => ({ content: greet(name) }),
      }),
    );
    // GET /api/v1/plugins/${name}/greeting?name=..., behind the daemon's auth (needs the "routes" capability).
    ctx.routes.add(
      defineRoute({
        method: "GET",
        path: "/greeting",
        operationId: "greeting",
        summary: "A greeting",
        query: T.Object({ name: T.Optional(T.String({ minLength: 1, maxLength: 100 })) }),
        responses: { 200: T.Object({ greeting: T.String() }) },
        handler: ({ query }) => ({ body: { greeting: greet(query.name ?? "world") } }),
      }),
    );
  },
});
`;
  const test = `import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type PluginHarness, startPluginHarness } from "agentd/testing";
import plugin from "./index.js";

// startPluginHarness runs the plugin through agentd's real loader, with the manifest of ./package.json (where
// \`npm test\` runs): options validated, capabilities enforced, register/start/stop called; inject() calls its
// routes through the real HTTP stack without a socket.
describe("${name}", () => {
  let h: PluginHarness;
  before(async () => {
    h = await startPluginHarness(plugin, { options: { greeting: "Hi" } });
  });
  after(async () => {
    await h.stop();
  });

  it("greets with the configured greeting", async () => {
    assert.equal((await h.callTool("${tool}", { name: "Ada" })).content, "Hi, Ada!");
  });

  it("refuses arguments that do not match the schema", async () => {
    assert.equal((await h.callTool("${tool}", { name: "" })).error?.code, "invalid_arguments");
  });

  it("serves its greeting route, authenticated and validated", async () => {
    const res = await h.inject("GET", "/plugins/${name}/greeting?name=Ada");
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { greeting: "Hi, Ada!" });
    assert.equal((await h.inject("GET", "/plugins/${name}/greeting?name=")).status, 400);
    assert.equal((await h.inject("GET", "/plugins/${name}/greeting", undefined, { auth: false })).status, 401);
  });

  it("cannot add its route unless the config allows the routes capability", async () => {
    await assert.rejects(startPluginHarness(plugin, { grant: [] }), /pluginCapabilities\\.${name}/);
  });
});
`;
  const readme = `# ${name}

${description}.

- Tool \`${tool} {name}\`: greets someone.
- Route \`GET /api/v1/plugins/${name}/greeting?name=...\`: the same greeting (name defaults to "world").

Its manifest (id, version, description, the capabilities it asks for) is the \`agentd\` key of package.json.

## Develop

\`\`\`sh
npm install
npm test        # builds, then runs index.test.ts through agentd's real plugin loader (agentd/testing)
\`\`\`

## Install into agentd

\`\`\`sh
npm run build
agentd plugin add ./${name}    # shows the capabilities it asks for ("routes") and enables it
\`\`\`

Options (\`pluginOptions.${name}\` in the agentd config): \`greeting\` (default \`"Hello"\`).
`;
  return {
    "package.json": `${JSON.stringify(pkg, null, 2)}\n`,
    "tsconfig.json": tsconfig,
    "index.ts": index,
    "index.test.ts": test,
    "README.md": readme,
    ".gitignore": "node_modules\ndist\n",
  };
}
