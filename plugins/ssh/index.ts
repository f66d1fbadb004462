import {
  definePlugin,
  optional,
  ProjectTrustToken,
  type ShellClassifier,
  ShellClassifierToken,
  T,
} from "../../core/index.js";
import { sshRoutes } from "./routes/index.js";
// A pure function shared with the bash tool so both judge commands alike (no plugin instance is involved).
import { SshStore } from "./store.js";
import { createSshTool, DEFAULT_SSH_TOOL_OPTIONS, type SshToolOptions } from "./tool.js";

export { SshStore } from "./store.js";
export { createSshTool, type SshToolOptions, sshArgs } from "./tool.js";
export { normalisePrivateKey, type SshHost, sanitiseKeyName } from "./validate.js";

export const SshOptionsSchema = T.Object(
  {
    binary: T.Optional(T.String({ minLength: 1, description: 'The ssh client to run (default "ssh" from PATH)' })),
    timeoutSec: T.Optional(T.Integer({ minimum: 1, maximum: 3600, description: "Default command timeout (180)" })),
    maxOutputBytes: T.Optional(
      T.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, description: "Bytes kept per stream, the tail (131072)" }),
    ),
    connectTimeoutSec: T.Optional(T.Integer({ minimum: 1, maximum: 300, description: "ssh ConnectTimeout (15)" })),
    confirm: T.Optional(
      T.Unsafe<"all" | "dangerous">({
        type: "string",
        enum: ["all", "dangerous"],
        description: 'Which remote commands ask the user first: "all" (default) or only "dangerous" ones',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Why a remote command needs confirmation (the shell classifier service), or undefined when it looks safe. */
function dangerReason(classifier: ShellClassifier | undefined, command: string): string | undefined {
  if (!classifier) return "it could not be checked (the tools-shell plugin, which classifies commands, is not loaded)";
  const c = classifier.classify(command);
  return c.dangerous ? c.reasons.join("; ") : undefined;
}

/** SSH keys and hosts (global, and per trusted project) and the `ssh` tool. */
export default definePlugin({
  manifest: {
    id: "ssh",
    version: "1.0.0",
    description: "SSH keys and hosts (POST /ssh/key, /ssh/add) and the ssh tool (every remote command is confirmed)",
    capabilities: ["routes", "process", "network"],
    configSchema: SshOptionsSchema,
  },
  deps: {
    trust: optional(ProjectTrustToken),
    classifier: optional(ShellClassifierToken),
  },
  register(ctx) {
    const o = ctx.options;
    const options: SshToolOptions = {
      binary: o.binary ?? DEFAULT_SSH_TOOL_OPTIONS.binary,
      defaultTimeoutSec: o.timeoutSec ?? DEFAULT_SSH_TOOL_OPTIONS.defaultTimeoutSec,
      maxOutputBytes: o.maxOutputBytes ?? DEFAULT_SSH_TOOL_OPTIONS.maxOutputBytes,
      connectTimeoutSec: o.connectTimeoutSec ?? DEFAULT_SSH_TOOL_OPTIONS.connectTimeoutSec,
      confirm: o.confirm ?? DEFAULT_SSH_TOOL_OPTIONS.confirm,
    };
    const store = new SshStore(ctx.home, ctx.log, () => ctx.deps.trust);
    ctx.tools.add(
      createSshTool({
        store,
        options: () => options,
        classify: (command) => dangerReason(ctx.deps.classifier, command),
      }),
    );

    for (const r of sshRoutes({ store, log: ctx.log })) ctx.routes.add(r);
  },
});
