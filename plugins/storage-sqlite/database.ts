import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";

let addon: string | undefined;

/**
 * better-sqlite3's native addon, where its install puts it (a prebuilt binary or a compile: `build/Release`). Named
 * explicitly because the daemon's bundle holds better-sqlite3's JavaScript (scripts/bundle.ts): its default lookup
 * (the `bindings` package) searches from the file that calls it, which is then the bundle, not better-sqlite3's folder.
 */
function nativeBinding(): string {
  addon ??= join(
    dirname(createRequire(import.meta.url).resolve("better-sqlite3/package.json")),
    "build",
    "Release",
    "better_sqlite3.node",
  );
  return addon;
}

/** A better-sqlite3 connection to `file`: how agentd's plugins open SQLite. */
export function openDatabase(file: string, options: Database.Options = {}): Database.Database {
  return new Database(file, { ...options, nativeBinding: nativeBinding() });
}
