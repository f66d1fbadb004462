import { renameSync, writeFileSync } from "node:fs";

/** Write-then-rename, so a crash never leaves a half-written file. */
export function writeFileAtomic(file: string, content: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, file);
}
