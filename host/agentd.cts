#!/usr/bin/env node
/*
 * The `agentd` command (package.json "bin"). CommonJS, so that a command that needs no ES module starts without
 * node's ES module loader: it runs the launcher `npm run build` writes beside it (cli.cjs, scripts/bundle-launcher.ts:
 * the CLI in one file, `serve` loading the daemon's runtime directly). After a later bare `tsc`, the compiled CLI
 * (main.js) is newer than the launcher: it runs instead, with the compiled modules, never a stale launcher.
 */
import { statSync } from "node:fs";
import { join } from "node:path";

const mtime = (file: string) => statSync(join(__dirname, file), { throwIfNoEntry: false })?.mtimeMs;
const launcher = mtime("cli.cjs");
if (launcher !== undefined && launcher >= (mtime("main.js") ?? 0)) require("./cli.cjs");
else void import("./main.js");
