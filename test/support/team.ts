import { startTestDaemon, type TestDaemon } from "../../testing/daemon.js";

/**
 * `n` daemons with their own homes, ports and tokens on the database `url`, talking to the fake provider at
 * `providerUrl`. Started together: one migrates, the others wait on the advisory lock and find the schema done.
 */
export function startTeam(n: number, url: string, providerUrl: string): Promise<TestDaemon[]> {
  const start = () =>
    startTestDaemon({
      env: { AGENTD_DATABASE_URL: url },
      config: { provider: { baseURL: providerUrl, apiKey: "sk-test", model: "m" } },
    });
  return Promise.all(Array.from({ length: n }, start));
}
