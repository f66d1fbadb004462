import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Disposable } from "./disposable.js";
import { writePrivateFileAsync } from "./files.js";
import { createToken } from "./tokens.js";

/**
 * Small named documents the daemon and its plugins keep beside the sessions: the user's settings, the saved
 * approval rules, the trust decisions. One daemon keeps them as files in its home (`<home>/<name>`); a database
 * several daemons share keeps them in the database, so every daemon of the team sees the same ones (the store's
 * {@link SessionStore.documents}).
 */
export interface DocumentStore {
  /** Where the documents are, for messages: "/home/me/.agentd" or "postgres://…/db (password redacted)". */
  readonly where: string;
  /** The document's text, or undefined when there is none. */
  read(name: string): Promise<string | undefined>;
  /**
   * Changes a document: `edit` gets the current text and returns the new one (undefined: leave it as it is).
   * Changes of one document are applied one at a time, also across daemons sharing the store, so none is lost.
   * Resolves with the text the document then holds.
   */
  update(name: string, edit: (current: string | undefined) => string | undefined): Promise<string | undefined>;
  /**
   * Optional: `fn(name)` after another daemon changed a document (a hint: read it again); `fn(undefined)` when any
   * may have changed (the daemon was not listening for a while).
   */
  watch?(fn: (name: string | undefined) => void): Disposable;
}

/** Holds the settings (with the provider's API key): a plugin needs the `secrets` capability. */
export const DocumentStoreToken = createToken<DocumentStore>("documents", { capability: "secrets" });

/** The documents of one daemon: files in its home, each written atomically with mode 0600. */
export class FileDocuments implements DocumentStore {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(readonly where: string) {}

  async read(name: string): Promise<string | undefined> {
    try {
      return await readFile(join(this.where, name), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      const code = (err as NodeJS.ErrnoException).code;
      throw Object.assign(new Error(`cannot read ${join(this.where, name)}: ${code ?? err}`), { code });
    }
  }

  update(name: string, edit: (current: string | undefined) => string | undefined): Promise<string | undefined> {
    const run = (this.chains.get(name) ?? Promise.resolve()).then(async () => {
      const current = await this.read(name);
      const next = edit(current);
      if (next === undefined || next === current) return current;
      await writePrivateFileAsync(join(this.where, name), next);
      return next;
    });
    const settled = run.catch(() => {});
    this.chains.set(name, settled);
    void settled.then(() => {
      if (this.chains.get(name) === settled) this.chains.delete(name);
    });
    return run;
  }
}

const DOCUMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * A plugin's own documents (`ctx.documents()`): the names it uses are kept under `plugins-data/<id>/`, so a plugin
 * reaches only its own (files in its data directory, or rows of a team's database).
 */
export function pluginDocuments(store: () => DocumentStore, pluginId: string): DocumentStore {
  const prefix = `plugins-data/${pluginId}/`;
  const full = (name: string) => {
    if (!DOCUMENT_NAME.test(name) || name.includes("..")) {
      throw new Error(`"${name}" is not a document name (letters, digits, dots, dashes, underscores; at most 128)`);
    }
    return prefix + name;
  };
  return {
    get where() {
      return store().where;
    },
    read: async (name) => store().read(full(name)),
    update: async (name, edit) => store().update(full(name), edit),
    watch(fn) {
      const watched = store().watch?.((name) => {
        if (name === undefined) fn(undefined);
        else if (name.startsWith(prefix)) fn(name.slice(prefix.length));
      });
      return watched ?? { dispose() {} };
    },
  };
}
