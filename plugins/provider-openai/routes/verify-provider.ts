import { defineRoute, T } from "../../../core/index.js";
import { verifyProvider } from "../verify.js";
import { ProviderVerificationSchema, parseEndpoint } from "./shared.js";

export const ProviderVerificationRequestSchema = T.Object(
  {
    url: T.String({ minLength: 1, maxLength: 2048, description: "Base URL of the endpoint, e.g. http://host/v1" }),
    apiKey: T.Optional(T.String({ maxLength: 4096, description: "Sent to the endpoint only; never stored" })),
  },
  { title: "ProviderVerificationRequest", additionalProperties: false },
);

export function verifyProviderRoute() {
  return defineRoute({
    method: "POST",
    path: "/provider/verify",
    operationId: "verifyProvider",
    summary: "Probes an endpoint's /models with a key (10 s bound); nothing is saved and the key is not echoed",
    tags: ["settings"],
    body: ProviderVerificationRequestSchema,
    responses: { 200: ProviderVerificationSchema },
    handler: async (req) => {
      const url = parseEndpoint(req.body.url);
      return { body: await verifyProvider(url, req.body.apiKey || undefined, req.signal) };
    },
  });
}
