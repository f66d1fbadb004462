/**
 * Section 7 in a process of its own (bench/search.ts), under the V8 flags `agentd serve` sets before its modules load
 * (host/v8-flags.ts: 1 MiB semi-spaces that never grow, the memory-saving mode): a tool call here collects garbage as
 * it does in the daemon. Run as `node search-child.js <tree> <reps>`; prints the SearchResult as JSON.
 */
(await import("../host/v8-flags.js")).setDaemonFlags();
const { measureSearch } = await import("./search.js");
const { removeTempDirs } = await import("./lib/daemon.js");
const [tree, reps] = process.argv.slice(2);
try {
  process.stdout.write(JSON.stringify(await measureSearch(tree as string, Number(reps))));
} finally {
  await removeTempDirs();
}
