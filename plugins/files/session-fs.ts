import { ApiError, type SessionService, T } from "../../core/index.js";
import { EntryTypeSchema } from "./entries.js";
import { realpathOrUndefined } from "./paths.js";

/** Entries listed per directory at most. */
export const MAX_LIST = 10_000;
export const SEARCH_DEFAULT = 200;
export const SEARCH_MAX = 1000;
export const SEARCH_VISITED = 20_000;

export const FsEntrySchema = T.Object(
  {
    name: T.String(),
    type: EntryTypeSchema,
    size: T.Optional(T.Integer({ description: "Bytes (files)" })),
    symlink: T.Optional(T.Literal(true)),
  },
  { title: "FsEntry" },
);

export const FsListing = T.Object(
  {
    path: T.String({ description: 'Directory listed, relative to the session directory ("." for itself)' }),
    entries: T.Array(FsEntrySchema, { description: "Directories first, then by name; .git is hidden" }),
    truncated: T.Boolean(),
  },
  { title: "FsListing" },
);

export const PathQuery = (description: string, required: boolean) => {
  const s = T.String({ maxLength: 4096, description });
  return required ? T.String({ minLength: 1, maxLength: 4096, description }) : T.Optional(s);
};

export interface SessionRoot {
  /** realpath of the session directory, undefined when it does not exist (any more). */
  root: string | undefined;
  aliases: string[];
}

/** The session directory of a files route: `rootOf` (undefined when it is gone) or `requireRoot` (404 then). */
export function sessionRoots(sessions: () => SessionService) {
  const rootOf = async (id: string): Promise<SessionRoot> => {
    const rec = await sessions().require(id);
    const root = await realpathOrUndefined(rec.cwd);
    return { root, aliases: root ? [root, rec.cwd] : [rec.cwd] };
  };
  const requireRoot = async (id: string): Promise<{ root: string; aliases: string[] }> => {
    const r = await rootOf(id);
    if (!r.root) throw ApiError.notFound("The session's working directory does not exist");
    return { root: r.root, aliases: r.aliases };
  };

  return { rootOf, requireRoot };
}

export const tags = ["files"];
