import { expect } from "chai";
import fc from "fast-check";
import type { ProviderDelta } from "../core/index.js";
import { ChunkReader } from "../plugins/provider-openai/chunk-reader.js";
import { CASES, decodeInPieces, FILES, read } from "./support/provider-streams.js";

describe("provider compatibility: recorded streams of real providers", () => {
  it("has an expectation for every recorded stream, and a recording for every expectation", () => {
    expect(FILES.length).to.be.at.least(24);
    expect([...FILES].sort()).to.deep.equal(Object.keys(CASES).sort());
  });

  it("decodes every stream the same however its bytes are split across network reads", async () => {
    for (const file of FILES) {
      const bytes = read(file);
      const whole = await decodeInPieces(bytes, []);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat(), { maxLength: 40 }), async (cuts) => {
          const split = await decodeInPieces(bytes, cuts);
          const joined = (r: typeof whole) => ({
            text: r.deltas.map((d) => (d.type === "content" ? d.text : "")).join(""),
            reasoning: r.deltas.map((d) => (d.type === "reasoning" ? d.text : "")).join(""),
            rest: r.deltas.filter((d) => d.type !== "content" && d.type !== "reasoning"),
            error: r.error,
          });
          expect(joined(split), file).to.deep.equal(joined(whole));
        }),
        { numRuns: 15 },
      );
    }
  });

  it("splits <think> and harmony reasoning out of content live: tags split anywhere, text before and after", () => {
    const run = (pieces: string[]) => {
      const reader = new ChunkReader();
      const out: ProviderDelta[] = [];
      for (const content of pieces) reader.read({ choices: [{ index: 0, delta: { content } }] }, out);
      reader.end(out);
      const of = (t: string) =>
        out
          .filter((d) => d.type === t)
          .map((d) => (d as { text: string }).text)
          .join("");
      return { text: of("content"), reasoning: of("reasoning") };
    };
    const cases: Array<[string, { text: string; reasoning: string }]> = [
      ["\n<think>\nplan a < b</think>\n\nAnswer <b>x</b>", { text: "Answer <b>x</b>", reasoning: "plan a < b" }],
      [
        "Answer first, then <think>literal</think>",
        { text: "Answer first, then <think>literal</think>", reasoning: "" },
      ],
      [
        "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>Done <|x|>.",
        { text: "Done <|x|>.", reasoning: "think" },
      ],
      ["a <thin", { text: "a <thin", reasoning: "" }],
    ];
    for (const [whole, want] of cases) {
      expect(run([whole]), whole).to.deep.equal(want);
      for (let i = 1; i < whole.length; i++) {
        for (let j = i; j < whole.length; j++) {
          expect(run([whole.slice(0, i), whole.slice(i, j), whole.slice(j)]), `${whole} @${i},${j}`).to.deep.equal(
            want,
          );
        }
      }
    }
  });
});
