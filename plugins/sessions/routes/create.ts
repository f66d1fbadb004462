import { defineRoute, SessionSummarySchema, T } from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

const CreateSessionRequest = T.Object(
  {
    persona: T.Optional(T.String({ minLength: 1, maxLength: 100, description: "Persona name (404 when unknown)" })),
    model: T.Optional(T.String({ minLength: 1, maxLength: 200 })),
    cwd: T.Optional(
      T.String({
        minLength: 1,
        maxLength: 4096,
        description: 'Absolute existing directory, or "sandbox" for a scratch one',
      }),
    ),
    title: T.Optional(T.String({ maxLength: 200 })),
    worktree: T.Optional(
      T.Union(
        [
          T.Boolean(),
          T.Object(
            {
              branch: T.Optional(
                T.String({
                  minLength: 1,
                  maxLength: 200,
                  description: "Default agentd/<session id>; 400 if it exists",
                }),
              ),
              base: T.Optional(
                T.String({
                  minLength: 1,
                  maxLength: 200,
                  description: "Branch or commit to start from (default HEAD)",
                }),
              ),
            },
            { additionalProperties: false },
          ),
        ],
        {
          description:
            "Work in a new git worktree of cwd's repository, on a new branch (400 outside git, for a branch git " +
            "refuses or one that exists; nothing is created then)",
        },
      ),
    ),
  },
  { title: "CreateSessionRequest", additionalProperties: false },
);

const CreateSessionResponse = T.Object(
  { id: T.String(), session: SessionSummarySchema },
  { title: "CreateSessionResponse" },
);

export function createSessionRoute({ svc }: SessionRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions",
    operationId: "createSession",
    summary: "Create a session (persisted at once)",
    tags,
    body: CreateSessionRequest,
    bodyRequired: false,
    responses: { 201: CreateSessionResponse },
    handler: async ({ body }) => {
      const rec = await svc().create(body ?? {});
      return { status: 201, body: { id: rec.id, session: svc().summary(rec) } };
    },
  });
}
