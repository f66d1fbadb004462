import { renameSync, writeFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";

interface PendingWrite {
  /** What the file must end up holding. */
  latest: string;
  /** latest changed since the running write took its copy. */
  dirty: boolean;
}

const writes = new Map<string, PendingWrite>();
let exitHookInstalled = false;

/**
 * Write-then-rename, so a crash never leaves a half-written file; asynchronous, so the chat path never waits on
 * the disk. Writes to one file are serialised and coalesced: the file always ends up with the latest content, and
 * a write still running when the process exits is completed synchronously in the exit hook. Only a crash in the
 * first milliseconds after a change can lose that change.
 */
export function writeFileAtomic(file: string, content: string): void {
  const running = writes.get(file);
  if (running) {
    running.latest = content;
    running.dirty = true;
    return;
  }
  const w: PendingWrite = { latest: content, dirty: true };
  writes.set(file, w);
  installExitHook();
  void pump(file, w);
}

async function pump(file: string, w: PendingWrite): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    while (w.dirty) {
      w.dirty = false;
      try {
        await writeFile(tmp, w.latest);
        await rename(tmp, file);
      } catch {
        // The directory went away (home removed) or the disk is full: the marker is best effort.
      }
    }
  } finally {
    writes.delete(file);
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const [file, w] of writes) {
      try {
        const tmp = `${file}.${process.pid}.exit.tmp`;
        writeFileSync(tmp, w.latest);
        renameSync(tmp, file);
      } catch {
        // nothing more can be done at exit
      }
    }
  });
}
