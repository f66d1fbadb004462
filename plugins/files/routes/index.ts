import type { AnyRoute, SessionService, SessionStore } from "../../../core/index.js";
import type { BrowseDeps } from "../browse.js";
import { imageRoute } from "../image.js";
import type { InputsOptions } from "../inputs.js";
import { deleteBrowseEntryRoute } from "./browse-delete.js";
import { browseDirectoryRoute } from "./browse-directory.js";
import { browseMkdirRoute } from "./browse-mkdir.js";
import { deleteSessionFileRoute } from "./fs-delete.js";
import { downloadSessionFileRoute } from "./fs-download.js";
import { listSessionFilesRoute } from "./fs-list.js";
import { renameSessionFileRoute } from "./fs-rename.js";
import { searchSessionFilesRoute } from "./fs-search.js";
import { deleteAttachmentRoute } from "./inputs-delete.js";
import { downloadAttachmentRoute } from "./inputs-download.js";
import { listAttachmentsRoute } from "./inputs-list.js";
import { uploadAttachmentRoute } from "./inputs-upload.js";

/** What the files routes use: the session directories (fs-*), attachments (inputs-*) and browse roots (browse-*). */
export interface FilesRouteDeps {
  sessions: () => SessionService;
  store: () => SessionStore;
  inputs: InputsOptions;
  browse: BrowseDeps;
}

/** The files plugin's routes, one per file; the order is the OpenAPI document's. */
export function filesRoutes({ sessions, store, inputs, browse }: FilesRouteDeps): AnyRoute[] {
  return [
    listSessionFilesRoute(sessions),
    deleteSessionFileRoute(sessions),
    searchSessionFilesRoute(sessions),
    downloadSessionFileRoute(sessions),
    renameSessionFileRoute(sessions),
    listAttachmentsRoute(inputs),
    uploadAttachmentRoute(inputs),
    downloadAttachmentRoute(inputs),
    deleteAttachmentRoute(inputs),
    browseDirectoryRoute(browse),
    deleteBrowseEntryRoute(browse),
    browseMkdirRoute(browse),
    imageRoute(sessions, store),
  ];
}
