import { lstat, realpath, rmdir, unlink } from "node:fs/promises";
import path from "node:path";
import { ApiError, defineRoute, isInside, OkSchema, T, withDirInside } from "../../../core/index.js";
import { absoluteInput, type BrowseDeps, rootOf, tags } from "../browse.js";
import { fsError } from "../paths.js";

export function deleteBrowseEntryRoute({ roots }: BrowseDeps) {
  return defineRoute({
    method: "DELETE",
    path: "/browse",
    operationId: "deleteBrowseEntry",
    summary: "Delete a file or an empty directory inside the permitted roots",
    description: "A root itself (or a directory containing one) is never deleted; a non-empty directory is a 409.",
    tags,
    query: T.Object({ path: T.String({ minLength: 1, maxLength: 4096, description: "Absolute path of the entry" }) }),
    errors: [409],
    responses: { 200: OkSchema },
    handler: async ({ query }) => {
      const all = await roots();
      const wanted = absoluteInput(query.path);
      const name = path.basename(wanted);
      if (wanted === path.dirname(wanted)) throw ApiError.badRequest("Refusing to delete the file system root");
      const parent = await realpath(path.dirname(wanted)).catch((err) => {
        throw fsError(err, query.path);
      });
      if (!rootOf(all, parent)) throw ApiError.badRequest(`Outside the permitted roots: ${query.path}`);
      const abs = path.join(parent, name);
      const st = await lstat(abs).catch((err) => {
        throw fsError(err, query.path);
      });
      if (st.isDirectory()) {
        if (all.some((r) => isInside(abs, r))) {
          throw ApiError.badRequest(`Refusing to delete a browse root: ${query.path}`);
        }
        await withDirInside(all, parent, (d) => rmdir(d.at(name))).catch((err) => {
          throw fsError(err, query.path);
        });
      } else {
        await withDirInside(all, parent, (d) => unlink(d.at(name))).catch((err) => {
          throw fsError(err, query.path);
        });
      }
      return { body: { ok: true as const } };
    },
  });
}
