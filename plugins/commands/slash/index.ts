/** The slash commands of the commands plugin, one per file, in the order `/help` lists them. */
import type { SlashCommand } from "../../../core/index.js";
import type { CommandEnv } from "../env.js";
import { abortCommand } from "./abort.js";
import { clearCommand } from "./clear.js";
import { compactCommand } from "./compact.js";
import { forkCommand } from "./fork.js";
import { goalCommand } from "./goal.js";
import { helpCommand } from "./help.js";
import { hooksCommand } from "./hooks.js";
import { mcpCommand } from "./mcp.js";
import { modelCommand } from "./model.js";
import { permissionsCommand } from "./permissions.js";
import { personaCommand } from "./persona.js";
import { planModeCommands } from "./plan-mode.js";
import { providerCommand } from "./provider.js";
import { queueCommand } from "./queue.js";
import { queueResetCommand } from "./queue-reset.js";
import { reasoningCommand } from "./reasoning.js";
import { redoCommand } from "./redo.js";
import { reloadCommand } from "./reload.js";
import { repoCommand } from "./repo.js";
import { rewindCommand } from "./rewind.js";
import { rulesCommand } from "./rules.js";
import { skillsCommand } from "./skills.js";
import { sshCommand } from "./ssh.js";
import { steerCommand } from "./steer.js";
import { themeCommand } from "./theme.js";
import { turnCapCommand } from "./turn-cap.js";
import { undoCommand } from "./undo.js";
import { webCommand } from "./web.js";
import { worktreeCommand } from "./worktree.js";

export function slashCommands(env: CommandEnv): SlashCommand[] {
  return [
    undoCommand(env),
    rewindCommand(env),
    redoCommand(env),
    forkCommand(env),
    steerCommand(env),
    queueCommand(env),
    queueResetCommand(env),
    abortCommand(env),
    goalCommand(env),
    turnCapCommand(env),
    ...planModeCommands(env),
    permissionsCommand(env),
    clearCommand(env),
    compactCommand(env),
    modelCommand(env),
    personaCommand(env),
    providerCommand(env),
    reasoningCommand(env),
    themeCommand(env),
    skillsCommand(env),
    rulesCommand(env),
    hooksCommand(env),
    mcpCommand(env),
    webCommand(env),
    sshCommand(env),
    repoCommand(env),
    worktreeCommand(env),
    reloadCommand(env),
    helpCommand(env),
  ];
}
