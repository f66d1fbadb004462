import type { Theme } from "../../core/index.js";

/** Every colour a client needs to paint the whole UI; each theme sets all of them. */
export interface ThemeColors {
  [key: string]: string | { from: string; to: string };
  /** The brand gradient (logo, active session marker). */
  gradient: { from: string; to: string };
  /** The user's messages. */
  user: string;
  /** The agent's text (the main text colour). */
  agent: string;
  /** Tool calls and their results. */
  tool: string;
  /** The persona name. */
  persona: string;
  /** Links, focus rings, primary buttons. */
  accent: string;
  success: string;
  warning: string;
  error: string;
  /** Secondary text: timestamps, hints, reasoning. */
  muted: string;
  bg: string;
  /** Panels and the composer. */
  bgSurface: string;
  /** Menus, popovers, code blocks. */
  bgRaised: string;
  bgHover: string;
  border: string;
  borderActive: string;
}

export interface BuiltinTheme extends Theme {
  colors: ThemeColors;
  /** "dark" or "light": lets a client follow the system preference. */
  appearance: "dark" | "light";
}

/** The keys every theme defines, in display order. */
export const THEME_COLOR_KEYS = [
  "gradient",
  "user",
  "agent",
  "tool",
  "persona",
  "accent",
  "success",
  "warning",
  "error",
  "muted",
  "bg",
  "bgSurface",
  "bgRaised",
  "bgHover",
  "border",
  "borderActive",
] as const;

/** The default theme for clients that have no preference. */
export const DEFAULT_THEME_ID = "dark";

export const BUILTIN_THEMES: BuiltinTheme[] = [
  {
    id: "dark",
    label: "Dark",
    description: "The default dark theme: cool greys with a blue-violet accent",
    appearance: "dark",
    colors: {
      gradient: { from: "#5b9dff", to: "#c084fc" },
      user: "#8ab4ff",
      agent: "#e6e9ef",
      tool: "#c3a6ff",
      persona: "#7ee0c3",
      accent: "#5b9dff",
      success: "#4ade80",
      warning: "#fbbf24",
      error: "#f87171",
      muted: "#9aa3b2",
      bg: "#0f1117",
      bgSurface: "#161a23",
      bgRaised: "#1d2230",
      bgHover: "#252b3b",
      border: "#2e3545",
      borderActive: "#5b9dff",
    },
  },
  {
    id: "light",
    label: "Light",
    description: "A clean light theme with GitHub-like colours",
    appearance: "light",
    colors: {
      gradient: { from: "#0969da", to: "#8250df" },
      user: "#0550ae",
      agent: "#1f2328",
      tool: "#6639ba",
      persona: "#116329",
      accent: "#0969da",
      success: "#1a7f37",
      warning: "#9a6700",
      error: "#cf222e",
      muted: "#59636e",
      bg: "#ffffff",
      bgSurface: "#f6f8fa",
      bgRaised: "#eff2f5",
      bgHover: "#e6eaef",
      border: "#d1d9e0",
      borderActive: "#0969da",
    },
  },
  {
    id: "solarized-dark",
    label: "Solarized Dark",
    description: "Ethan Schoonover's Solarized, dark background",
    appearance: "dark",
    colors: {
      gradient: { from: "#268bd2", to: "#d33682" },
      user: "#4ea3e0",
      agent: "#93a1a1",
      tool: "#8c8fdb",
      persona: "#2aa198",
      accent: "#3d9ade",
      success: "#859900",
      warning: "#b58900",
      error: "#e5534b",
      muted: "#7b9097",
      bg: "#002b36",
      bgSurface: "#073642",
      bgRaised: "#0b3f4c",
      bgHover: "#104a58",
      border: "#1a5564",
      borderActive: "#268bd2",
    },
  },
  {
    id: "solarized-light",
    label: "Solarized Light",
    description: "Ethan Schoonover's Solarized, light background",
    appearance: "light",
    colors: {
      gradient: { from: "#268bd2", to: "#d33682" },
      user: "#1f6fa8",
      agent: "#4f5f66",
      tool: "#5458a8",
      persona: "#1d7a73",
      accent: "#1f6fa8",
      success: "#5f6e00",
      warning: "#8a6800",
      error: "#c0262d",
      muted: "#5f7178",
      bg: "#fdf6e3",
      bgSurface: "#eee8d5",
      bgRaised: "#e6dfc8",
      bgHover: "#ddd6bd",
      border: "#d3cbb0",
      borderActive: "#268bd2",
    },
  },
  {
    id: "high-contrast",
    label: "High Contrast",
    description: "Black background, white text and saturated colours, all at 7:1 contrast or more (WCAG AAA)",
    appearance: "dark",
    colors: {
      gradient: { from: "#ffd700", to: "#7fdbff" },
      user: "#7fdbff",
      agent: "#ffffff",
      tool: "#ffb3ff",
      persona: "#7fffd4",
      accent: "#ffd700",
      success: "#00ff7f",
      warning: "#ffd700",
      error: "#ff8080",
      muted: "#d0d0d0",
      bg: "#000000",
      bgSurface: "#0a0a0a",
      bgRaised: "#141414",
      bgHover: "#262626",
      border: "#ffffff",
      borderActive: "#ffd700",
    },
  },
  {
    id: "high-contrast-light",
    label: "High Contrast Light",
    description: "White background, black text and deep colours, all at 7:1 contrast or more (WCAG AAA)",
    appearance: "light",
    colors: {
      gradient: { from: "#0030a0", to: "#6a0080" },
      user: "#0030a0",
      agent: "#000000",
      tool: "#6a0080",
      persona: "#004d36",
      accent: "#0030a0",
      success: "#005a20",
      warning: "#6b4500",
      error: "#a00000",
      muted: "#333333",
      bg: "#ffffff",
      bgSurface: "#f5f5f5",
      bgRaised: "#ebebeb",
      bgHover: "#dcdcdc",
      border: "#000000",
      borderActive: "#0030a0",
    },
  },
  {
    id: "nord",
    label: "Nord",
    description: "An arctic, north-bluish palette",
    appearance: "dark",
    colors: {
      gradient: { from: "#88c0d0", to: "#b48ead" },
      user: "#88c0d0",
      agent: "#eceff4",
      tool: "#c4a3c0",
      persona: "#8fbcbb",
      accent: "#81a1c1",
      success: "#a3be8c",
      warning: "#ebcb8b",
      error: "#e0808a",
      muted: "#a3adbf",
      bg: "#2e3440",
      bgSurface: "#3b4252",
      bgRaised: "#434c5e",
      bgHover: "#4c566a",
      border: "#4c566a",
      borderActive: "#88c0d0",
    },
  },
  {
    id: "dracula",
    label: "Dracula",
    description: "The Dracula palette: purple, pink and green on a dark violet-grey",
    appearance: "dark",
    colors: {
      gradient: { from: "#bd93f9", to: "#ff79c6" },
      user: "#8be9fd",
      agent: "#f8f8f2",
      tool: "#bd93f9",
      persona: "#50fa7b",
      accent: "#ff79c6",
      success: "#50fa7b",
      warning: "#f1fa8c",
      error: "#ff6e6e",
      muted: "#8b96c4",
      bg: "#282a36",
      bgSurface: "#2f3140",
      bgRaised: "#363949",
      bgHover: "#44475a",
      border: "#44475a",
      borderActive: "#bd93f9",
    },
  },
  {
    id: "gruvbox",
    label: "Gruvbox",
    description: "Retro groove colours on a warm dark background",
    appearance: "dark",
    colors: {
      gradient: { from: "#fabd2f", to: "#fe8019" },
      user: "#83a598",
      agent: "#ebdbb2",
      tool: "#d3869b",
      persona: "#8ec07c",
      accent: "#fe8019",
      success: "#b8bb26",
      warning: "#fabd2f",
      error: "#fb4934",
      muted: "#a89984",
      bg: "#282828",
      bgSurface: "#32302f",
      bgRaised: "#3c3836",
      bgHover: "#504945",
      border: "#504945",
      borderActive: "#fabd2f",
    },
  },
  {
    id: "tokyo-night",
    label: "Tokyo Night",
    description: "Neon lights of a Tokyo night on a deep blue background",
    appearance: "dark",
    colors: {
      gradient: { from: "#7aa2f7", to: "#bb9af7" },
      user: "#7aa2f7",
      agent: "#c0caf5",
      tool: "#bb9af7",
      persona: "#73daca",
      accent: "#7dcfff",
      success: "#9ece6a",
      warning: "#e0af68",
      error: "#f7768e",
      muted: "#8089b3",
      bg: "#1a1b26",
      bgSurface: "#1f2335",
      bgRaised: "#24283b",
      bgHover: "#292e42",
      border: "#3b4261",
      borderActive: "#7aa2f7",
    },
  },
];
