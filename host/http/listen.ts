import { createServer, type RequestListener, type Server } from "node:http";

/**
 * The daemon's HTTP server, listening on `host:port`. A bind failure rejects with a message that says what to do
 * (a taken port: another agentd perhaps, `--port`).
 */
export async function listen(app: RequestListener, host: string, port: number): Promise<Server> {
  const server = createServer({ keepAliveTimeout: 5000 }, app);
  server.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  }).catch((err: NodeJS.ErrnoException) => {
    const hint =
      err.code === "EADDRINUSE"
        ? " (the port is taken, perhaps by another agentd: `agentd status` tells; pick another with --port N, or --port 0 for any free port)"
        : "";
    throw new Error(`cannot listen on ${host}:${port}: ${err.code ?? err.message}${hint}`);
  });
  return server;
}
