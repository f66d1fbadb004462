import { request } from "node:http";

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * A raw HTTP request (no URL normalisation, any method and headers), answered with status, headers and body.
 * `headersOnly`: resolve at the response head and close (event streams never end). Rejects after `timeoutMs`.
 */
export function rawRequest(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer | string,
  opts: { headersOnly?: boolean; timeoutMs?: number } = {},
): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      if (opts.headersOnly) {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: "" });
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }),
      );
      res.on("error", reject);
    });
    req.setTimeout(opts.timeoutMs ?? 30_000, () => {
      req.destroy(new Error(`no answer within ${opts.timeoutMs ?? 30_000} ms: ${method} ${path}`));
    });
    req.on("error", reject);
    req.end(body);
  });
}
