import { PROVIDER_PRESETS, presetById, presetURL } from "../api/provider-presets.js";

/** What `/provider presets` and `/provider preset <id> [part…] [key=K] [model=M]` ask of the terminal client. */
export type PresetCommand =
  | { list: string }
  | { error: string }
  | { body: { baseURL: string; apiKey?: string; model?: string } };

/** Parses the client-side `/provider preset…` lines; undefined for any other `/provider` line (the daemon's). */
export function parsePresetCommand(line: string): PresetCommand | undefined {
  const [, sub, id, ...rest] = line.trim().split(/\s+/);
  if (sub === "presets" || (sub === "preset" && !id)) {
    const rows = PROVIDER_PRESETS.map((p) => `  ${p.id.padEnd(11)} ${p.baseURL}${p.needsKey ? "  (API key)" : ""}`);
    return {
      list: `Presets (/provider preset <id> [part…] [key=K] [model=M]; {…} parts in order):\n${rows.join("\n")}`,
    };
  }
  if (sub !== "preset" || !id) return undefined;
  const preset = presetById(id);
  if (!preset) return { error: `Unknown preset "${id}" (/provider presets lists them)` };
  const parts = rest.filter((t) => !/^(key|model)=/.test(t));
  const key = rest.find((t) => t.startsWith("key="))?.slice(4);
  const model = rest.find((t) => t.startsWith("model="))?.slice(6);
  const baseURL = presetURL(preset, parts);
  if (!baseURL) return { error: `The ${preset.label} URL needs its parts: ${preset.baseURL}` };
  if (preset.needsKey && !key) return { error: `${preset.label} needs an API key: add key=<your key>` };
  return { body: { baseURL, ...(key ? { apiKey: key } : {}), ...(model ? { model } : {}) } };
}
