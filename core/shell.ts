import { createToken } from "./tokens.js";

export interface CommandClassification {
  dangerous: boolean;
  /** Readable reasons, one per finding (`"rm -rf build" is a recursive, forced delete`). */
  reasons: string[];
}

/** Judges a bash command line before it runs (the tools-shell plugin provides it; the ssh plugin asks for it). */
export interface ShellClassifier {
  classify(command: string): CommandClassification;
}

export const ShellClassifierToken = createToken<ShellClassifier>("shell-classifier");
