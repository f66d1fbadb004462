import { lstat, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import {
  type AnyRoute,
  ApiError,
  defineRoute,
  isInside,
  OkSchema,
  SessionIdParams,
  type SessionService,
  T,
  withDirInside,
} from "../../core/index.js";
import { BinaryResponse, DownloadQueryFields, fileDownload, wantsInline } from "./download.js";
import { byDirThenName, EntryTypeSchema, type TypedEntry, typeOf } from "./entries.js";
import {
  checkBareName,
  fsError,
  realpathOrUndefined,
  relativeTo,
  resolveEntry,
  resolveExisting,
  segmentsOf,
} from "./paths.js";
import { searchFiles } from "./search.js";

/** Entries listed per directory at most. */
const MAX_LIST = 10_000;
const SEARCH_DEFAULT = 200;
const SEARCH_MAX = 1000;
const SEARCH_VISITED = 20_000;

const FsEntrySchema = T.Object(
  {
    name: T.String(),
    type: EntryTypeSchema,
    size: T.Optional(T.Integer({ description: "Bytes (files)" })),
    symlink: T.Optional(T.Literal(true)),
  },
  { title: "FsEntry" },
);

const FsListing = T.Object(
  {
    path: T.String({ description: 'Directory listed, relative to the session directory ("." for itself)' }),
    entries: T.Array(FsEntrySchema, { description: "Directories first, then by name; .git is hidden" }),
    truncated: T.Boolean(),
  },
  { title: "FsListing" },
);

const PathQuery = (description: string, required: boolean) => {
  const s = T.String({ maxLength: 4096, description });
  return required ? T.String({ minLength: 1, maxLength: 4096, description }) : T.Optional(s);
};

interface SessionRoot {
  /** realpath of the session directory, undefined when it does not exist (any more). */
  root: string | undefined;
  aliases: string[];
}

export function sessionFsRoutes(sessions: () => SessionService): AnyRoute[] {
  const tags = ["files"];
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

  return [
    defineRoute({
      method: "GET",
      path: "/sessions/:id/fs",
      operationId: "listSessionFiles",
      summary: "List one directory of the session's working directory",
      tags,
      params: SessionIdParams,
      query: T.Object({ path: PathQuery('Relative to the session directory (default ".")', false) }),
      responses: { 200: FsListing },
      handler: async ({ params, query }) => {
        const { root, aliases } = await rootOf(params.id);
        if (!root) return { body: { path: ".", entries: [], truncated: false } };
        const shown = query.path || ".";
        const abs = await resolveExisting(root, segmentsOf(shown, aliases), shown);
        const st = await stat(abs).catch((err) => {
          throw fsError(err, shown);
        });
        if (!st.isDirectory()) throw ApiError.badRequest(`Not a directory: ${shown}`);
        const dirents = await withDirInside([root], abs, (d) => readdir(d.path, { withFileTypes: true })).catch(
          (err) => {
            throw fsError(err, shown);
          },
        );
        const visible = dirents.filter((d) => d.name !== ".git");
        const truncated = visible.length > MAX_LIST;
        const shownEntries = truncated ? visible.slice(0, MAX_LIST) : visible;
        const entries: Array<{ name: string } & TypedEntry> = await Promise.all(
          shownEntries.map(async (d) => ({ name: d.name, ...(await typeOf(d, path.join(abs, d.name), [root], true)) })),
        );
        entries.sort(byDirThenName);
        return { body: { path: relativeTo(root, abs), entries, truncated } };
      },
    }),
    defineRoute({
      method: "DELETE",
      path: "/sessions/:id/fs",
      operationId: "deleteSessionFile",
      summary: "Delete a file or directory (recursively) inside the session directory",
      description:
        "A symbolic link is removed itself, never what it points to. The session directory itself cannot be deleted.",
      tags,
      params: SessionIdParams,
      query: T.Object({ path: PathQuery("Relative to the session directory", true) }),
      responses: { 200: OkSchema },
      handler: async ({ params, query }) => {
        const { root, aliases } = await requireRoot(params.id);
        const entry = await resolveEntry(root, segmentsOf(query.path, aliases), query.path);
        if (entry.abs === root) throw ApiError.badRequest("Refusing to delete the session directory itself");
        // Removed through the opened parent: a parent swapped for a link meanwhile is caught, not followed.
        await withDirInside([root], entry.parent, (d) => rm(d.at(entry.name), { recursive: true, force: false })).catch(
          (err) => {
            throw fsError(err, query.path);
          },
        );
        return { body: { ok: true as const } };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/sessions/:id/fs/search",
      operationId: "searchSessionFiles",
      summary: "Find files and directories by name in the session directory",
      description:
        "Case-insensitive substring match on the names of files and of the directories holding them (on the " +
        "relative path when q contains '/'), shallow matches first. Entries ignored by .gitignore, .ignore or the " +
        "global git excludes, .git and symbolic links are skipped. Bounded: `limit` results and 20,000 listed " +
        "files; `truncated` says there is more. Runs on ripgrep when found (see GET /server/status).",
      tags,
      params: SessionIdParams,
      query: T.Object({
        q: T.Optional(T.String({ maxLength: 500 })),
        limit: T.Optional(T.Integer({ minimum: 1, maximum: SEARCH_MAX, description: `Default ${SEARCH_DEFAULT}` })),
      }),
      responses: {
        200: T.Object(
          {
            results: T.Array(T.Object({ path: T.String(), type: EntryTypeSchema }, { title: "FsSearchHit" })),
            truncated: T.Boolean(),
          },
          { title: "FsSearchResults" },
        ),
      },
      handler: async ({ params, query, signal }) => {
        const { root } = await rootOf(params.id);
        const q = query.q?.trim() ?? "";
        if (!root || !q) return { body: { results: [], truncated: false } };
        const limits = { maxResults: query.limit ?? SEARCH_DEFAULT, maxVisited: SEARCH_VISITED };
        return { body: await searchFiles(root, q, limits, signal) };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/sessions/:id/fs/download",
      operationId: "downloadSessionFile",
      summary: "Download a file of the session directory",
      tags,
      params: SessionIdParams,
      query: T.Object({ path: PathQuery("Relative to the session directory", true), ...DownloadQueryFields }),
      responses: { 200: BinaryResponse },
      handler: async ({ params, query, signal }) => {
        const { root, aliases } = await requireRoot(params.id);
        const segs = segmentsOf(query.path, aliases);
        if (segs.length === 0) throw ApiError.badRequest("Not a file: the session directory");
        const abs = await resolveExisting(root, segs, query.path);
        return fileDownload([root], abs, query.path, wantsInline(query.inline), signal);
      },
    }),
    defineRoute({
      method: "POST",
      path: "/sessions/:id/fs/rename",
      operationId: "renameSessionFile",
      summary: "Rename or move a file or directory inside the session directory; never overwrites (409)",
      tags,
      params: SessionIdParams,
      body: T.Object(
        {
          path: T.Optional(T.String({ minLength: 1, maxLength: 4096, description: "The entry to rename" })),
          from: T.Optional(T.String({ minLength: 1, maxLength: 4096, description: "Alias of path" })),
          name: T.Optional(T.String({ minLength: 1, maxLength: 255, description: "New name in the same directory" })),
          to: T.Optional(
            T.String({ minLength: 1, maxLength: 4096, description: "New path (relative to the session directory)" }),
          ),
        },
        { additionalProperties: false, title: "FsRenameRequest", description: "Give path (or from), and name or to" },
      ),
      errors: [409],
      responses: {
        200: T.Object(
          { ok: T.Literal(true), from: T.String(), path: T.String({ description: "The new relative path" }) },
          {
            title: "FsRenameResult",
          },
        ),
      },
      handler: async ({ params, body }) => {
        const { root, aliases } = await requireRoot(params.id);
        const source = body.path ?? body.from;
        if (!source) throw ApiError.badRequest('Give the entry to rename in "path"');
        if ((body.name === undefined) === (body.to === undefined)) {
          throw ApiError.badRequest('Give exactly one of "name" (same directory) or "to" (a new relative path)');
        }
        const src = await resolveEntry(root, segmentsOf(source, aliases), source);
        let dstParent: string;
        let dstName: string;
        if (body.name !== undefined) {
          dstParent = src.parent;
          dstName = checkBareName(body.name);
        } else {
          const to = body.to as string;
          const dsegs = segmentsOf(to, aliases);
          const last = dsegs.at(-1);
          if (last === undefined) throw ApiError.badRequest("Invalid destination: the session directory itself");
          dstName = checkBareName(last);
          dstParent = await resolveExisting(root, dsegs.slice(0, -1), to);
        }
        const dst = path.join(dstParent, dstName);
        if (dst === src.abs) throw ApiError.badRequest("The destination is the entry itself");
        if (src.stats.isDirectory() && isInside(src.abs, dstParent)) {
          throw ApiError.badRequest("Cannot move a directory into itself");
        }
        const shownDst = relativeTo(root, dst);
        // Both parents are opened and verified; the move goes through their descriptors (core/confined-fs).
        await withDirInside([root], src.parent, (from) =>
          withDirInside([root], dstParent, async (into) => {
            const exists = await lstat(into.at(dstName)).then(
              () => true,
              () => false,
            );
            if (exists) throw ApiError.conflict(`Already exists: ${shownDst}`);
            await rename(from.at(src.name), into.at(dstName));
          }),
        ).catch((err) => {
          throw err instanceof ApiError ? err : fsError(err, shownDst);
        });
        return { body: { ok: true as const, from: relativeTo(root, src.abs), path: shownDst } };
      },
    }),
  ];
}
