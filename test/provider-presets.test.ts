import { expect } from "chai";
import { PROVIDER_PRESETS, presetById, presetURL } from "../clients/api/provider-presets.js";
import { parsePresetCommand } from "../clients/terminal/provider-preset.js";

describe("provider presets (shared by the web UI and the terminal client)", () => {
  it("are unique, with http(s) URL templates", () => {
    const ids = PROVIDER_PRESETS.map((p) => p.id);
    expect(new Set(ids).size).to.equal(ids.length);
    for (const p of PROVIDER_PRESETS) expect(p.baseURL, p.id).to.match(/^https?:\/\//);
    expect(presetById("Ollama")).to.include({ needsKey: false, baseURL: "http://localhost:11434/v1" });
  });

  it("fill their {…} parts in order, and say when one is missing", () => {
    const azure = presetById("azure");
    expect(azure && presetURL(azure, ["acme"])).to.equal("https://acme.openai.azure.com/openai/v1");
    expect(azure && presetURL(azure, [])).to.equal(undefined);
  });

  it("/provider preset in the terminal client: a body to verify and save, a list, or a clear refusal", () => {
    expect(parsePresetCommand("/provider preset groq key=gsk_x model=llama")).to.deep.equal({
      body: { baseURL: "https://api.groq.com/openai/v1", apiKey: "gsk_x", model: "llama" },
    });
    expect(parsePresetCommand("/provider preset ollama")).to.deep.equal({
      body: { baseURL: "http://localhost:11434/v1" },
    });
    expect(parsePresetCommand("/provider presets")).to.have.property("list").that.includes("openrouter");
    expect(parsePresetCommand("/provider preset groq")).to.deep.equal({
      error: "Groq needs an API key: add key=<your key>",
    });
    expect(parsePresetCommand("/provider preset azure key=k"))
      .to.have.property("error")
      .that.match(/needs its parts/);
    expect(parsePresetCommand("/provider preset nope"))
      .to.have.property("error")
      .that.match(/Unknown preset/);
    // Anything else is the daemon's /provider command.
    expect(parsePresetCommand("/provider openai")).to.equal(undefined);
    expect(parsePresetCommand("/provider")).to.equal(undefined);
  });
});
