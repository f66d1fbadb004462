/** How printed items and the live part of a turn look. */
import { Box, Text } from "ink";
import { useEffect, useState } from "react";
import { tail } from "../format.js";
import { renderMarkdown } from "../markdown.js";
import type { Item, RunningTool, Todo } from "./store.js";

const toneColor = { dim: undefined, info: "cyan", warn: "yellow", error: "red", ok: "green" } as const;

export function ItemView({ item, width, showThinking }: { item: Item; width: number; showThinking: boolean }) {
  switch (item.kind) {
    case "user":
      return (
        <Box marginTop={1}>
          <Text color="cyan" bold>
            {"› "}
          </Text>
          <Text bold>{item.text}</Text>
        </Box>
      );
    case "assistant":
      return (
        <Box marginTop={1}>
          <Text>{renderMarkdown(item.text, width - 1)}</Text>
        </Box>
      );
    case "thinking": {
      const lines = item.text.split("\n");
      const room = Math.max(10, width - 40);
      const text = showThinking
        ? item.text
        : `${(lines[0] ?? "").slice(0, room)}${lines.length > 1 || (lines[0]?.length ?? 0) > room ? ` … (${lines.length} lines; Ctrl+O shows)` : ""}`;
      return (
        <Box marginTop={1}>
          <Box width={2} flexShrink={0}>
            <Text dimColor>∴</Text>
          </Box>
          <Text dimColor italic>
            {text}
          </Text>
        </Box>
      );
    }
    case "tool":
      return (
        <Box flexDirection="column">
          <Text>
            <Text color={item.status === "ok" ? "green" : "red"}>{item.status === "ok" ? "✓ " : "✗ "}</Text>
            <Text color="blue">{item.line}</Text>
          </Text>
          {item.detail ? <Text color="red"> {item.detail}</Text> : null}
        </Box>
      );
    case "note":
      return (
        <Box>
          <Box width={2} flexShrink={0}>
            <Text color={toneColor[item.tone]} dimColor={item.tone === "dim"}>
              {item.tone === "warn" ? "⚠" : item.tone === "error" ? "✗" : "·"}
            </Text>
          </Box>
          <Text color={toneColor[item.tone]} dimColor={item.tone === "dim"}>
            {item.text}
          </Text>
        </Box>
      );
  }
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

function useTick(active: boolean, ms: number): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setN((x) => x + 1), ms);
    return () => clearInterval(t);
  }, [active, ms]);
  return n;
}

export function LiveView(props: {
  text: string;
  thinking: string;
  tools: RunningTool[];
  width: number;
  running: boolean;
}) {
  const tick = useTick(props.running, 120);
  const thinkingTail = tail(props.thinking, 3);
  return (
    <Box flexDirection="column">
      {thinkingTail.length > 0 && (
        <Box marginTop={1} flexDirection="column">
          {thinkingTail.map((l, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the last lines of a stream
            <Text key={i} dimColor italic>
              ∴ {l}
            </Text>
          ))}
        </Box>
      )}
      {props.text.trim() !== "" && (
        <Box marginTop={1}>
          <Text>{renderMarkdown(props.text, props.width - 1)}</Text>
        </Box>
      )}
      {props.tools.map((t) => (
        <Box key={t.id} flexDirection="column">
          <Text>
            <Text color="yellow">{FRAMES[tick % FRAMES.length]} </Text>
            <Text color="blue">{t.line}</Text>
          </Text>
          {tail(t.output, 5).map((l, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the last lines of a stream
            <Text key={i} dimColor wrap="truncate-end">
              {"  "}
              {l}
            </Text>
          ))}
        </Box>
      ))}
    </Box>
  );
}

export function TodoList({ todos }: { todos: readonly Todo[] }) {
  if (!todos.length || todos.every((t) => t.status === "completed")) return null;
  const icon = (s: string) => (s === "completed" ? "☑" : s === "in_progress" ? "◐" : s === "cancelled" ? "☒" : "☐");
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold>Todos</Text>
      {todos.map((t, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: todos are positional
        <Text key={i} dimColor={t.status === "completed"} color={t.status === "in_progress" ? "yellow" : undefined}>
          {icon(t.status)} {t.content}
        </Text>
      ))}
    </Box>
  );
}

export function Rule({ width }: { width: number }) {
  return <Text dimColor>{"─".repeat(Math.max(10, width - 1))}</Text>;
}

export function StatusLine(props: {
  persona: string;
  mode: string;
  model: string;
  /** The session's worktree branch, when it has one. */
  branch?: string;
  promptTokens: number;
  /** The model's context window, when the provider says. */
  contextWindow?: number;
  totalTokens: number;
  running: boolean;
  startedAt?: number;
  queueMode: boolean;
  link: "open" | "reconnecting";
  hint?: string;
  width: number;
}) {
  const tick = useTick(props.running, 1000);
  void tick;
  const elapsed = props.running && props.startedAt ? Math.max(0, Math.round((Date.now() - props.startedAt) / 1000)) : 0;
  const k = (n: number) =>
    n >= 100_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
  const left = `${props.persona} · ${props.mode} · ${props.model}${props.branch ? ` · ⎇ ${props.branch}` : ""}`;
  const ctx = props.contextWindow
    ? `ctx ${k(props.promptTokens)}/${k(props.contextWindow)} (${Math.round((100 * props.promptTokens) / props.contextWindow)}%)`
    : `ctx ${k(props.promptTokens)}`;
  const parts = [ctx, `${k(props.totalTokens)} tok`];
  if (props.running) parts.unshift(`● ${elapsed}s${props.queueMode ? " · queueing" : ""}`);
  return (
    <Box flexDirection="column">
      <Box justifyContent="space-between" width={props.width - 1}>
        <Text color={props.mode === "plan" ? "magenta" : "cyan"} wrap="truncate-end">
          {left}
        </Text>
        <Text dimColor wrap="truncate-start">
          {props.link === "reconnecting" ? <Text color="yellow">reconnecting… · </Text> : null}
          {props.hint ? <Text color="yellow">{props.hint} · </Text> : null}
          {parts.join(" · ")}
        </Text>
      </Box>
    </Box>
  );
}
