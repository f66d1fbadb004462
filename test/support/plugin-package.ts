import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** This checkout (from dist/test/support/). */
export const REPO = fileURLToPath(new URL("../../..", import.meta.url));
/** examples/hello-plugin: what `agentd plugin new hello` writes. */
export const HELLO_EXAMPLE = join(REPO, "examples", "hello-plugin");

/** The environment without the outer AGENTD_* variables. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("AGENTD_")) env[k] = v;
  return env;
}

/** Runs a command to its end: its exit code and output (a failure is a result, not a rejection). */
export async function sh(
  cmd: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(cmd, args, { cwd, env: cleanEnv(), maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * What `npm install` gives a plugin package, offline: this checkout as its `agentd` dev dependency, and the
 * checkout's TypeScript (`tsc` on the package's PATH) and Node types.
 */
export function linkDevDependencies(dir: string): void {
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  mkdirSync(join(dir, "node_modules", "@types"), { recursive: true });
  symlinkSync(REPO, join(dir, "node_modules", "agentd"));
  symlinkSync(join(REPO, "node_modules", "typescript"), join(dir, "node_modules", "typescript"));
  symlinkSync(join(REPO, "node_modules", "@types", "node"), join(dir, "node_modules", "@types", "node"));
  symlinkSync("../typescript/bin/tsc", join(dir, "node_modules", ".bin", "tsc"));
}

/** A copy of a package's own files (not its node_modules or build output) in a new temporary folder. */
export function copyPackage(from: string): string {
  const dir = mkdtempSync(join(tmpdir(), "agentd-plugin-copy-"));
  for (const f of readdirSync(from, { withFileTypes: true })) {
    if (f.isFile()) copyFileSync(join(from, f.name), join(dir, f.name));
  }
  return dir;
}

/**
 * examples/hello-plugin ready for the daemon to load, without building it again: its package.json in a temporary
 * folder whose `dist` is what the checkout's build compiled of it (dist/examples/hello-plugin). Its `import "agentd"`
 * resolves to this checkout (the real path of the module is inside it).
 */
export function builtHelloExample(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentd-hello-"));
  copyFileSync(join(HELLO_EXAMPLE, "package.json"), join(dir, "package.json"));
  symlinkSync(join(REPO, "dist", "examples", "hello-plugin"), join(dir, "dist"));
  return dir;
}
