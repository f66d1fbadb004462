/**
 * Which reasoning controls a model offers, by model family and by the provider's dialect. A dialect is how an
 * OpenAI-compatible endpoint spells reasoning: OpenAI-style `reasoning_effort` levels, or an on/off "thinking"
 * switch (DeepSeek, Qwen, GLM, Kimi). Unknown models get no options rather than a guess that the endpoint rejects.
 */

export const DIALECTS = ["openai", "openrouter", "deepseek", "qwen", "kimi", "zai", "xai", "generic"] as const;
export type Dialect = (typeof DIALECTS)[number];

export interface ReasoningOption {
  value: string;
  label: string;
}

export interface ReasoningOptions {
  model: string;
  dialect: Dialect;
  /** effort: `reasoning_effort` levels; toggle: thinking on/off; none: nothing to choose. */
  kind: "effort" | "toggle" | "none";
  options: ReasoningOption[];
  /** The value used when nothing is chosen (null when there are no options). */
  default: string | null;
}

const LABELS: Record<string, string> = {
  off: "Off",
  on: "On",
  minimal: "Minimal",
  low: "Low",
  medium: "Medium",
  high: "High",
};

const HOST_DIALECTS: Array<[RegExp, Dialect]> = [
  [/(^|\.)openai\.com$/, "openai"],
  [/(^|\.)openrouter\.ai$/, "openrouter"],
  [/(^|\.)deepseek\.com$/, "deepseek"],
  [/(dashscope|aliyuncs|alibabacloud)/, "qwen"],
  [/(moonshot|kimi\.com)/, "kimi"],
  [/(^|\.)(z\.ai|bigmodel\.cn)$/, "zai"],
  [/(^|\.)x\.ai$/, "xai"],
];

/** The dialect of an endpoint, from the host of its base URL (the OpenAI SDK default when none is set). */
export function detectDialect(baseURL: string | undefined): Dialect {
  if (!baseURL) return "openai";
  let host: string;
  try {
    host = new URL(baseURL).hostname.toLowerCase();
  } catch {
    return "generic";
  }
  return HOST_DIALECTS.find(([re]) => re.test(host))?.[1] ?? "generic";
}

const effort = (values: string[], def: string): Omit<ReasoningOptions, "model" | "dialect"> => ({
  kind: "effort",
  options: values.map((value) => ({ value, label: LABELS[value] ?? value })),
  default: def,
});
const toggle = (def: "on" | "off"): Omit<ReasoningOptions, "model" | "dialect"> => ({
  kind: "toggle",
  options: [
    { value: "off", label: LABELS.off as string },
    { value: "on", label: LABELS.on as string },
  ],
  default: def,
});
const none = (): Omit<ReasoningOptions, "model" | "dialect"> => ({ kind: "none", options: [], default: null });

/** Model families first (a local server may serve any of them), then what the dialect implies. */
function byFamily(m: string): Omit<ReasoningOptions, "model" | "dialect"> | undefined {
  // OpenAI reasoning models: o-series always reason (no "off"); gpt-5 adds "minimal"; its chat variants do not reason.
  if (/^o[1-9](-|$)/.test(m)) return effort(["low", "medium", "high"], "medium");
  if (/^gpt-5/.test(m)) return /chat/.test(m) ? none() : effort(["minimal", "low", "medium", "high"], "medium");
  if (/^gpt-oss/.test(m)) return effort(["low", "medium", "high"], "medium");
  if (/^grok-3-mini/.test(m)) return effort(["low", "high"], "low");
  if (/^(claude-(3-7|sonnet-4|opus-4|haiku-4)|gemini-2\.5|gemini-3)/.test(m)) {
    return effort(["off", "low", "medium", "high"], "off");
  }
  // Always-thinking models: nothing to switch.
  if (/(deepseek-r1|deepseek-reasoner|qwq|thinking)/.test(m)) return none();
  if (/instruct/.test(m)) return undefined;
  // Hybrid models with a thinking switch, with the default of their own APIs.
  if (/^(deepseek-(v3\.[1-9]|v4|chat)|kimi-k2)/.test(m)) return toggle("off");
  if (/^(qwen3|glm-4\.[5-9]|glm-[5-9])/.test(m)) return toggle("on");
  return undefined;
}

/** Reasoning options for `model` served through an endpoint of `dialect`. */
export function reasoningOptionsFor(model: string, dialect: Dialect): ReasoningOptions {
  // "deepseek/deepseek-r1" (OpenRouter), "Qwen/Qwen3-32B" (Hugging Face ids): the family is the last segment.
  const m = (model.split("/").pop() ?? model).toLowerCase();
  const family = byFamily(m);
  if (family) return { model, dialect, ...family };
  return { model, dialect, ...none() };
}

/**
 * The request fields that carry a reasoning choice (`reasoningEffort` of a provider request) in a dialect: effort
 * levels as `reasoning_effort` (OpenRouter: `reasoning.effort`); the on/off switch of hybrid models as the field the
 * serving stack reads (DashScope `enable_thinking`, Z.ai and DeepSeek `thinking.type`, vLLM/SGLang/llama.cpp
 * `chat_template_kwargs.enable_thinking`). Nothing when no choice was made, so the endpoint's default applies.
 */
export function reasoningRequestFields(value: string | undefined, dialect: Dialect): Record<string, unknown> {
  if (!value) return {};
  if (value === "on" || value === "off") {
    const on = value === "on";
    switch (dialect) {
      case "qwen":
        return { enable_thinking: on };
      case "zai":
      case "deepseek":
        return { thinking: { type: on ? "enabled" : "disabled" } };
      case "openrouter":
        return { reasoning: { enabled: on } };
      case "openai":
      case "xai":
      case "kimi":
        return {};
      default:
        return { chat_template_kwargs: { enable_thinking: on } };
    }
  }
  if (dialect === "openrouter") return { reasoning: { effort: value } };
  return { reasoning_effort: value };
}
