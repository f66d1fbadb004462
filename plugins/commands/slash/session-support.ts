/** What several of the session commands share. */
import type { ChatOutcome } from "../../../core/index.js";

export const OUTCOME_TEXT: Record<ChatOutcome, string> = {
  started: "Sent",
  steered: "Steered into the running turn",
  queued: "Queued for after this turn",
  duplicate: "Already accepted",
};

export function fileSummary(out: { filesRestored: boolean; restored: string[]; removed: string[] }): string {
  return out.filesRestored
    ? `restored ${out.restored.length} file(s), removed ${out.removed.length}`
    : "no files to restore";
}
