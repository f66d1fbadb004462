import { rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { TSchema } from "@sinclair/typebox";
import type { ValidateFunction } from "ajv";
import { expect } from "chai";
import { definePlugin, defineRoute, RouteRegistryToken, T } from "../core/index.js";
import { type PrecompiledTable, precompiledName, setPrecompiledTable } from "../host/http/precompiled.js";
import { builtinSource } from "../host/plugin-sources.js";
import { validatorsSource } from "../scripts/validators.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";

const require = createRequire(import.meta.url);

/** The generated source, loaded as the build's file would be (inside the project: its requires resolve). */
function load(source: string): PrecompiledTable {
  const file = fileURLToPath(new URL(`./.validators-${process.pid}.cjs`, import.meta.url));
  writeFileSync(file, source);
  try {
    return require(file) as PrecompiledTable;
  } finally {
    rmSync(file, { force: true });
    delete require.cache[file];
  }
}

const Query = T.Object({ n: T.Optional(T.Integer({ minimum: 1, maximum: 5 })) }, { additionalProperties: false });
const Body = T.Object(
  { name: T.String({ minLength: 1 }), tags: T.Array(T.String(), { default: [] }) },
  { additionalProperties: false },
);
const seen: unknown[] = [];

/** A built-in-origin plugin (known-good schemas) whose routes no other test compiled. */
const probe = definePlugin({
  manifest: {
    id: "validator-probe",
    version: "1.0.0",
    description: "precompiled validators",
    capabilities: ["routes"],
  },
  register(ctx) {
    for (const method of ["GET", "POST"] as const) {
      ctx.routes.add(
        defineRoute({
          method,
          path: "/probe",
          operationId: `probe${method}`,
          summary: "records what the handler receives",
          ...(method === "GET" ? { query: Query } : { body: Body }),
          responses: { 200: T.Object({}, { additionalProperties: true }) },
          handler: async ({ query, body }) => {
            seen.push(method === "GET" ? query : body);
            return { body: {} };
          },
        }),
      );
    }
  },
});

describe("precompiled request validators (the build's vendor-validators.cjs)", () => {
  let d: TestDaemon;
  let table: PrecompiledTable;
  const calls = new Map<string, number>();

  before(async () => {
    d = await startTestDaemon({ extraPlugins: [builtinSource(probe)] });
    const routes = d.daemon.services.get(RouteRegistryToken).entries();
    table = load(validatorsSource(routes, () => true));
    // Each generated validator counted, so the test sees the daemon call them instead of compiling with Ajv.
    const counted: PrecompiledTable = {};
    for (const [name, fn] of Object.entries(table)) {
      const f = fn as ValidateFunction;
      const wrapper = ((data: unknown, ctx?: unknown) => {
        calls.set(name, (calls.get(name) ?? 0) + 1);
        const ok = (f as (data: unknown, ctx?: unknown) => boolean)(data, ctx);
        wrapper.errors = f.errors;
        return ok;
      }) as ValidateFunction;
      counted[name] = wrapper;
    }
    setPrecompiledTable(counted);
  });

  after(async () => {
    setPrecompiledTable(undefined);
    await d?.cleanup();
  });

  it("has a validator for every params, query and body schema of the host's and built-in plugins' routes", () => {
    const missing: string[] = [];
    for (const { item } of d.daemon.services.get(RouteRegistryToken).entries()) {
      const need: Array<["coercing" | "strict", TSchema | undefined]> = [
        ["coercing", item.params],
        ["coercing", item.query],
        ["strict", item.body],
      ];
      for (const [mode, schema] of need) {
        if (schema && !table[precompiledName(mode, schema)]) missing.push(`${item.method} ${item.path} (${mode})`);
      }
    }
    expect(missing).to.deep.equal([]);
    expect(Object.keys(table).length).to.be.greaterThan(20);
  });

  it("is in the build (`npm run build` wrote dist/bundle/vendor-validators.cjs) for every built-in route", () => {
    const built = require(
      fileURLToPath(new URL("../bundle/vendor-validators.cjs", import.meta.url)),
    ) as PrecompiledTable;
    const missing = Object.keys(table).filter((name) => !built[name] && !name.startsWith("_"));
    const own = new Set([precompiledName("coercing", Query), precompiledName("strict", Body)]);
    expect(missing.filter((name) => !own.has(name))).to.deep.equal([]);
  });

  it("coerces query strings, applies defaults and reports errors as the run-time Ajv does, through the daemon", async () => {
    expect((await d.get("/probe?n=3")).status).to.equal(200);
    expect(seen.at(-1)).to.deep.equal({ n: 3 });
    const tooBig = await d.get("/probe?n=9");
    expect(tooBig.status).to.equal(400);
    expect(tooBig.body).to.include({ error: "query.n must be <= 5", code: "validation_failed" });
    expect((await d.post("/probe", { name: "a" })).status).to.equal(200);
    expect(seen.at(-1)).to.deep.equal({ name: "a", tags: [] });
    const extra = await d.post("/probe", { name: "a", other: 1 });
    expect(extra.status).to.equal(400);
    expect(extra.body).to.include({ error: 'body must not have the property "other"', code: "validation_failed" });
    const wrong = await d.post("/probe", { name: "" });
    expect(wrong.status).to.equal(400);
    expect(wrong.body).to.include({ error: "body.name must NOT have fewer than 1 characters" });
    expect(calls.get(precompiledName("coercing", Query))).to.equal(2);
    expect(calls.get(precompiledName("strict", Body))).to.equal(3);
  });
});
