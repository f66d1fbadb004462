import { readdir } from "node:fs/promises";
import path from "node:path";
import { defineRoute, T, withDirInside } from "../../../core/index.js";
import { type BrowseDeps, BrowseListing, Flag, MAX_LIST, noRoots, on, resolveDir, tags } from "../browse.js";
import { byDirThenName, type EntryType, typeOf } from "../entries.js";
import { fsError } from "../paths.js";

export function browseDirectoryRoute({ roots, anywhere }: BrowseDeps) {
  return defineRoute({
    method: "GET",
    path: "/browse",
    operationId: "browseDirectory",
    summary: "List a directory (for picking a working directory)",
    description:
      "Any directory the daemon's user can read, unless pluginOptions.files.browseAnywhere is false (then only " +
      "inside the roots). Roots: pluginOptions.files.browseRoots, by default the user's home directory and the " +
      "daemon's default working directory; they are the picker's starting points. Directories only unless " +
      "files=1; dot entries hidden unless hidden=1.",
    tags,
    query: T.Object({
      path: T.Optional(T.String({ maxLength: 4096, description: "Absolute path or ~/...; default: the first root" })),
      files: Flag("1: list files too"),
      hidden: Flag("1: include names starting with a dot"),
    }),
    responses: { 200: BrowseListing },
    handler: async ({ query }) => {
      const configured = await roots();
      const open = anywhere();
      // Browsing anywhere: the file system root is one more root, the last resort of `rootOf`.
      const all = open ? [...configured, "/"] : configured;
      const first = all[0];
      if (!first) throw noRoots();
      const { abs, root } = await resolveDir(all, query.path?.trim() ? query.path : first);
      const dirents = await withDirInside(all, abs, (d) => readdir(d.path, { withFileTypes: true })).catch((err) => {
        throw fsError(err, abs);
      });
      const entries: Array<{ name: string; path: string; type: EntryType; symlink?: true }> = [];
      let truncated = false;
      for (const d of dirents) {
        if (!on(query.hidden) && d.name.startsWith(".")) continue;
        const p = path.join(abs, d.name);
        const t = await typeOf(d, p, all, false);
        if (t.type !== "dir" && !on(query.files)) continue;
        if (entries.length >= MAX_LIST) {
          truncated = true;
          break;
        }
        entries.push({ name: d.name, path: p, type: t.type, ...(t.symlink ? { symlink: true as const } : {}) });
      }
      entries.sort(byDirThenName);
      const stops = open ? abs === "/" : all.includes(abs);
      const parent = stops ? null : path.dirname(abs);
      return { body: { path: abs, parent, root, roots: configured, entries, truncated } };
    },
  });
}
