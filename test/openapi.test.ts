import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { compileErrors, validate } from "@readme/openapi-parser";
import { expect } from "chai";
import openapiTS from "openapi-typescript";
import { SNAPSHOT_FILE, servedOpenApi } from "../scripts/write-openapi-snapshot.js";

const SPEC = fileURLToPath(new URL("../../docs/api-v1.md", import.meta.url));

/** Every `| METHOD | /api/v1/... |` row of the contract's endpoint tables (the Endpoints part). */
function specOperations(): string[] {
  const text = readFileSync(SPEC, "utf8");
  const endpoints = text.slice(text.indexOf("## Endpoints"), text.indexOf("## Authentication"));
  const ops = new Set<string>();
  for (const m of endpoints.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| (\/api\/v1\/[^ |]+) \|/gm)) {
    ops.add(`${m[1]} ${(m[2] ?? "").replace(/\{id\}/g, "{id}")}`);
  }
  return [...ops].sort();
}

describe("OpenAPI document", () => {
  // biome-ignore lint/suspicious/noExplicitAny: a JSON document
  let doc: any;
  before(async () => {
    doc = await servedOpenApi();
  });

  it("is a valid OpenAPI 3.1 document (checked by a real parser)", async () => {
    const copy = structuredClone(doc);
    const result = await validate(copy);
    expect(result.valid, result.valid ? "" : compileErrors(result)).to.equal(true);
    expect(doc.openapi).to.equal("3.1.1");
    expect(doc.info.version).to.equal("1.0.0");
    expect(doc.components.securitySchemes).to.have.keys("loopbackBearer", "webSession", "loopbackQueryToken");
    // The query token is offered on the two event streams only.
    const withQueryToken = Object.entries(doc.paths as Record<string, Record<string, { security?: unknown }>>).flatMap(
      ([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => JSON.stringify(op.security ?? []).includes("loopbackQueryToken"))
          .map(([method]) => `${method} ${path}`),
    );
    expect(withQueryToken.sort()).to.deep.equal(["get /api/v1/sessions/events", "get /api/v1/sessions/{id}/events"]);
  });

  it("contains every path and method of the contract's endpoint tables", () => {
    const wanted = specOperations();
    expect(wanted.length, "operations parsed from the spec tables").to.equal(58);
    const served = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, object>)) {
      for (const method of Object.keys(ops)) served.add(`${method.toUpperCase()} ${path}`);
    }
    const missing = wanted.filter((op) => !served.has(op));
    expect(missing, `missing operations:\n${missing.join("\n")}`).to.deep.equal([]);
  });

  it("names every shape the contract names in components.schemas (WebEvent is the wire events' SessionEvent)", () => {
    const line = readFileSync(SPEC, "utf8")
      .split("\n")
      .find((l) => l.startsWith("Named request and response shapes referenced by endpoints:"));
    const names = (line ?? "")
      .slice(line?.indexOf(":") ?? 0)
      .replace(/^:|\.$/g, "")
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean);
    expect(names, "shapes parsed from the spec").to.include.members(["CommandResponse", "Session", "WebEvent"]);
    const schemas = doc.components.schemas as Record<string, object>;
    expect(
      names.filter((n) => !(n in schemas)),
      "named shapes missing from components.schemas",
    ).to.deep.equal([]);
    expect(schemas.WebEvent).to.include({ $ref: "#/components/schemas/SessionEvent" });
    expect(schemas.SessionEvent).to.have.property("oneOf");
  });

  it("documents 401 on protected operations and nothing on the public one", () => {
    for (const [path, ops] of Object.entries(
      doc.paths as Record<string, Record<string, { security?: unknown[]; responses: object }>>,
    )) {
      for (const [method, op] of Object.entries(ops)) {
        if (path === "/api/v1/openapi.json") expect(op.security).to.deep.equal([]);
        else expect(op.responses, `${method} ${path}`).to.have.property("401");
      }
    }
  });

  it("equals the published snapshot docs/openapi/v1.json (run `npm run openapi:snapshot` after changing routes)", () => {
    const snapshot = JSON.parse(readFileSync(SNAPSHOT_FILE, "utf8"));
    expect(doc).to.deep.equal(snapshot);
  });

  it("matches the clients' generated types clients/api/v1.d.ts (run `npm run gen:api` after changing routes)", async () => {
    const generated = await openapiTS(JSON.parse(readFileSync(SNAPSHOT_FILE, "utf8")));
    const committed = readFileSync(fileURLToPath(new URL("../../clients/api/v1.d.ts", import.meta.url)), "utf8");
    expect(committed).to.equal(generated);
  });
});
