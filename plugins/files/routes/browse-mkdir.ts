import { mkdir } from "node:fs/promises";
import path from "node:path";
import { defineRoute, T, withDirInside } from "../../../core/index.js";
import { type BrowseDeps, noRoots, resolveDir, tags } from "../browse.js";
import { checkBareName, fsError } from "../paths.js";

export function browseMkdirRoute({ roots }: BrowseDeps) {
  return defineRoute({
    method: "POST",
    path: "/browse/mkdir",
    operationId: "browseMkdir",
    summary: "Create a directory inside the permitted roots (409 when the name exists)",
    tags,
    body: T.Object(
      {
        path: T.Optional(
          T.String({ minLength: 1, maxLength: 4096, description: "Parent directory (default: the first root)" }),
        ),
        name: T.String({ minLength: 1, maxLength: 255, description: "Plain name of the new directory" }),
      },
      { additionalProperties: false, title: "BrowseMkdirRequest" },
    ),
    errors: [409],
    responses: {
      200: T.Object(
        { ok: T.Literal(true), path: T.String({ description: "The new directory (absolute)" }) },
        {
          title: "BrowseMkdirResult",
        },
      ),
    },
    handler: async ({ body }) => {
      const all = await roots();
      const first = all[0];
      if (!first) throw noRoots();
      const name = checkBareName(body.name, "folder name");
      const { abs: parent } = await resolveDir(all, body.path ?? first);
      const abs = path.join(parent, name);
      await withDirInside(all, parent, (d) => mkdir(d.at(name))).catch((err) => {
        throw fsError(err, abs);
      });
      return { body: { ok: true as const, path: abs } };
    },
  });
}
