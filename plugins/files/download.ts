import path from "node:path";
import { ApiError, openInside, type RouteResult, T } from "../../core/index.js";
import { fsError } from "./paths.js";

/** Types a browser may show inline. SVG is not among them: it can carry script. */
const INLINE_TYPES: Record<string, string> = {
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".ico": "image/x-icon",
};

/** Files up to this size are read in one go; larger ones are streamed. */
const BUFFER_LIMIT = 4 * 1024 * 1024;

export const BinaryResponse = {
  description: "The file's bytes",
  contentType: "application/octet-stream",
  schema: T.String({ format: "binary" }),
};

export const DownloadQueryFields = {
  inline: T.Optional(
    T.String({
      enum: ["1", "0", "true", "false"],
      description: "1: Content-Disposition inline, with the real type for pdf and raster images",
    }),
  ),
};

export function wantsInline(v: string | undefined): boolean {
  return v === "1" || v === "true";
}

/** RFC 6266 / 5987: an ASCII fallback name plus the exact UTF-8 name. */
export function contentDisposition(kind: "attachment" | "inline", name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\;]/g, "_");
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

/**
 * Serves a regular file. The file is opened before any header is written, so a missing or unreadable file is a
 * clean 404/400; a streamed download is closed when the client goes away.
 */
export async function fileDownload(
  roots: readonly string[],
  abs: string,
  shown: string,
  inline: boolean,
  signal: AbortSignal,
): Promise<RouteResult> {
  let fh: Awaited<ReturnType<typeof openInside>>;
  try {
    // Opened without following a swapped-in link, and verified where the descriptor really is (core/confined-fs).
    fh = await openInside(roots, abs);
  } catch (err) {
    throw fsError(err, shown);
  }
  let size: number;
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw ApiError.badRequest(`Not a file: ${shown}`);
    size = st.size;
  } catch (err) {
    await fh.close();
    throw err instanceof ApiError ? err : fsError(err, shown);
  }
  const name = path.basename(abs);
  const inlineType = inline ? INLINE_TYPES[path.extname(name).toLowerCase()] : undefined;
  const headers: Record<string, string> = {
    "Content-Disposition": contentDisposition(inlineType ? "inline" : "attachment", name),
    "Content-Length": String(size),
    "X-Content-Type-Options": "nosniff",
  };
  if (inlineType !== "application/pdf") headers["Content-Security-Policy"] = "default-src 'none'; sandbox";
  const contentType = inlineType ?? "application/octet-stream";
  if (size <= BUFFER_LIMIT) {
    try {
      const bytes = await fh.readFile();
      headers["Content-Length"] = String(bytes.length);
      return { bytes, contentType, headers };
    } catch (err) {
      throw fsError(err, shown);
    } finally {
      await fh.close();
    }
  }
  const stream = fh.createReadStream({ autoClose: true, start: 0, end: size - 1 });
  // A read error after the headers went out can only end the transfer; the host sees a short response.
  stream.on("error", () => stream.destroy());
  signal.addEventListener("abort", () => stream.destroy(), { once: true });
  return { bytes: stream, contentType, headers };
}
