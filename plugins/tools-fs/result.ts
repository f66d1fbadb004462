import { type ToolResult, toolError } from "../../core/index.js";

/** Maps a filesystem errno to a stable code. `display` is the path as the model wrote it (never a secret). */
export function fsFailure(err: unknown, display: string): ToolResult {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return toolError(
        "not_found",
        `${display} does not exist.`,
        "Check the path with ls or glob; paths are relative to the working directory.",
      );
    case "ENOTDIR":
      return toolError("not_found", `a parent of ${display} is a file, not a directory.`, "Check the path with ls.");
    case "EISDIR":
      return toolError(
        "invalid_arguments",
        `${display} is a directory.`,
        "Use ls to list a directory; read/write/edit take files.",
      );
    case "EACCES":
    case "EPERM":
      return toolError(
        "permission_denied",
        `the operating system denied access to ${display}.`,
        "Pick a file you can access.",
      );
    case "ELOOP":
      return toolError("invalid_arguments", `${display} is a symbolic link loop.`, "Use the link's real target path.");
    case "EESCAPE":
      return toolError(
        "outside_workspace",
        `${display} changed while it was being opened and now resolves outside the working directory.`,
        "Use a path inside the working directory.",
      );
    case "EMFILE":
    case "ENFILE":
    case "EBUSY":
    case "EAGAIN":
      return toolError(
        "execution_failed",
        `${display} is temporarily unavailable (${code}).`,
        "Retry in a moment.",
        true,
      );
    default:
      return toolError(
        "execution_failed",
        `filesystem error on ${display}: ${err instanceof Error ? err.message : String(err)}`,
        "Check the path and try again.",
      );
  }
}
