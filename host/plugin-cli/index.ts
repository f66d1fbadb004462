import { createInterface } from "node:readline/promises";
import { addPlugin, type CliIo, listPlugins, removePlugin } from "./commands.js";
import { scaffoldPlugin } from "./scaffold.js";

/** The terminal: questions only when stdin is interactive (otherwise `--yes` is needed). */
const io: CliIo = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
  ...(process.stdin.isTTY
    ? {
        async confirm(question: string) {
          const rl = createInterface({ input: process.stdin, output: process.stdout });
          try {
            return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
          } finally {
            rl.close();
          }
        },
      }
    : {}),
};

export const add = (home: string, spec: string, opts: { yes?: boolean }) => addPlugin(home, spec, opts, io);
export const remove = (home: string, id: string) => removePlugin(home, id, io);
export const list = (home: string, opts: { json?: boolean }) => listPlugins(home, opts, io);
export const scaffold = (name: string, opts: { dir?: string; agentdVersion: string }) => scaffoldPlugin(name, opts, io);
