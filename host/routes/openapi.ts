import { Type as T } from "@sinclair/typebox";
import { defineRoute } from "../../core/routes.js";
import type { HostRouteDeps } from "./shared.js";

export function openApiRoute({ info }: HostRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/openapi.json",
    operationId: "getOpenApi",
    summary: "The OpenAPI 3.1 description of this API (no authentication)",
    tags: ["server"],
    auth: "public",
    responses: { 200: T.Object({}, { additionalProperties: true, description: "OpenAPI 3.1 document" }) },
    handler: () => ({ body: info.openApi() }),
  });
}
