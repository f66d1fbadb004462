import { type StreamTurn, tools } from "../../testing/fake-provider.js";

/** The question the scripted model asks in the decision and client tests: one choice of two databases. */
export const DATABASE_QUESTIONS = [
  {
    question: "Which database?",
    options: [
      { label: "PostgreSQL", value: "pg" },
      { label: "SQLite", value: "sqlite" },
    ],
  },
];

/** A model call that asks it (tool call `q1`). */
export function askDatabase(): StreamTurn {
  return tools([{ name: "question", args: { questions: DATABASE_QUESTIONS }, id: "q1" }]);
}
