import { type Disposable, errorMessage, toDisposable } from "../../core/index.js";

/** Provider function names allow `[a-zA-Z0-9_-]{1,64}`. */
export const MAX_TOOL_NAME = 64;
const MAX_CANDIDATES = 100;

export function sanitise(part: string): string {
  return part.replace(/[^a-zA-Z0-9_-]/g, "_");
}

/** `mcp_<server>_<tool>` sanitised; a `suffix` (for collisions) is kept whole by truncating the base instead. */
export function toolName(server: string, tool: string, suffix = ""): string {
  const base = `mcp_${sanitise(server)}_${sanitise(tool)}`;
  return base.slice(0, MAX_TOOL_NAME - suffix.length) + suffix;
}

export interface NamedRegistration extends Disposable {
  readonly name: string;
}

/**
 * Hands out unique tool names across every MCP server. Sanitising and truncating can map different tools to one
 * name (`a.b` and `a_b`, a global and a project server of the same name), and the host registry refuses duplicates
 * (also against other plugins' tools), so the first free `<name>`, `<name>_2`, ... wins.
 */
export class ToolNames {
  private readonly used = new Set<string>();

  /**
   * Calls `add` with candidate names until one is accepted. `preferred` (a tool's previous name) is tried first so
   * names stay stable when a server's tool list is refreshed.
   */
  register(server: string, tool: string, add: (name: string) => Disposable, preferred?: string): NamedRegistration {
    const candidates = preferred ? [preferred] : [];
    for (let i = 1; i <= MAX_CANDIDATES; i++) candidates.push(toolName(server, tool, i === 1 ? "" : `_${i}`));
    let lastError: unknown;
    for (const name of candidates) {
      if (this.used.has(name)) continue;
      let inner: Disposable;
      try {
        inner = add(name);
      } catch (err) {
        // Taken by another plugin's tool: try the next candidate.
        lastError = err;
        continue;
      }
      this.used.add(name);
      const release = toDisposable(() => {
        this.used.delete(name);
        inner.dispose();
      });
      return { name, dispose: () => release.dispose() };
    }
    throw new Error(
      `no free tool name for ${tool} on MCP server ${server}${lastError ? ` (${errorMessage(lastError)})` : ""}`,
    );
  }
}
