/**
 * Common OpenAI-compatible providers and local servers, as data for the clients' provider forms (the web UI's
 * Settings, the terminal client's `/provider preset`). A preset only fills in the base URL: the daemon still verifies
 * the endpoint (and key) before it saves anything (PUT /settings/provider). `{name}` marks a part the user fills in.
 * README "Providers" has the matrix of what works with each.
 */
export interface ProviderPreset {
  id: string;
  label: string;
  /** The base URL; `{…}` parts are the user's (Azure resource name, a host). */
  baseURL: string;
  /** Whether the endpoint needs an API key. */
  needsKey: boolean;
}

export const PROVIDER_PRESETS: readonly ProviderPreset[] = [
  { id: "openai", label: "OpenAI", baseURL: "https://api.openai.com/v1", needsKey: true },
  { id: "azure", label: "Azure OpenAI", baseURL: "https://{resource}.openai.azure.com/openai/v1", needsKey: true },
  { id: "openrouter", label: "OpenRouter", baseURL: "https://openrouter.ai/api/v1", needsKey: true },
  { id: "deepseek", label: "DeepSeek", baseURL: "https://api.deepseek.com/v1", needsKey: true },
  { id: "groq", label: "Groq", baseURL: "https://api.groq.com/openai/v1", needsKey: true },
  { id: "mistral", label: "Mistral", baseURL: "https://api.mistral.ai/v1", needsKey: true },
  { id: "xai", label: "xAI", baseURL: "https://api.x.ai/v1", needsKey: true },
  { id: "together", label: "Together AI", baseURL: "https://api.together.xyz/v1", needsKey: true },
  { id: "fireworks", label: "Fireworks", baseURL: "https://api.fireworks.ai/inference/v1", needsKey: true },
  {
    id: "gemini",
    label: "Gemini (OpenAI-compatible)",
    baseURL: "https://generativelanguage.googleapis.com/v1beta/openai",
    needsKey: true,
  },
  { id: "anthropic", label: "Anthropic (OpenAI-compatible)", baseURL: "https://api.anthropic.com/v1", needsKey: true },
  {
    id: "alibaba",
    label: "Alibaba DashScope",
    baseURL: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
    needsKey: true,
  },
  { id: "minimax", label: "MiniMax", baseURL: "https://api.minimax.io/v1", needsKey: true },
  { id: "ollama", label: "Ollama (local)", baseURL: "http://localhost:11434/v1", needsKey: false },
  { id: "lmstudio", label: "LM Studio (local)", baseURL: "http://localhost:1234/v1", needsKey: false },
  { id: "llamacpp", label: "llama.cpp server (local)", baseURL: "http://localhost:8080/v1", needsKey: false },
  { id: "vllm", label: "vLLM (self-hosted)", baseURL: "http://{host}:8000/v1", needsKey: false },
];

/** The preset of an id, if any. */
export function presetById(id: string): ProviderPreset | undefined {
  return PROVIDER_PRESETS.find((p) => p.id === id.toLowerCase());
}

/** Fills the `{…}` parts of a preset's URL in order; undefined when a part is missing. */
export function presetURL(preset: ProviderPreset, parts: string[] = []): string | undefined {
  let i = 0;
  let missing = false;
  const url = preset.baseURL.replace(/\{[a-z]+\}/g, () => {
    const v = parts[i++];
    if (!v) missing = true;
    return v ?? "";
  });
  return missing ? undefined : url;
}
