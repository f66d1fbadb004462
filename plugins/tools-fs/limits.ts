/** Output and work caps of the file tools. Defaults suit a model's context; tests shrink them. */
export interface FsLimits {
  /** read: lines returned per call when no `limit` is given (and the maximum `limit`). */
  readMaxLines: number;
  /** read: characters kept per line before a truncation marker. */
  readMaxLineChars: number;
  /** read: bytes of formatted output per call. */
  readMaxBytes: number;
  /** read: images larger than this are refused (no downscaling without native deps). */
  readMaxImageBytes: number;
  /** read: stop counting the total number of lines after this many bytes (the footer then says "continues"). */
  readCountMaxBytes: number;
  /** edit: files larger than this are refused (the whole file is held in memory twice). */
  editMaxFileBytes: number;
  lsDefaultLimit: number;
  lsMaxLimit: number;
  globDefaultLimit: number;
  globMaxLimit: number;
  grepDefaultLimit: number;
  grepMaxLimit: number;
  /** grep: files larger than this are skipped and named in the footer (files are streamed, so this bounds time). */
  grepMaxFileBytes: number;
  /** grep: bytes of one line that are matched and kept; the rest of a longer line (minified code) is skipped. */
  grepMaxLineBytes: number;
  /** grep: bytes read per step; a step without a match is skipped with one regex pass. */
  grepChunkBytes: number;
  /** grep: characters kept per printed line. */
  grepMaxLineChars: number;
  /** grep: bytes of formatted output per call. */
  grepMaxBytes: number;
  /** glob/grep: files considered per call when walking without git. */
  walkMaxFiles: number;
}

export const DEFAULT_LIMITS: Readonly<FsLimits> = Object.freeze({
  readMaxLines: 2000,
  readMaxLineChars: 2000,
  readMaxBytes: 128 * 1024,
  readMaxImageBytes: 5 * 1024 * 1024,
  readCountMaxBytes: 64 * 1024 * 1024,
  editMaxFileBytes: 16 * 1024 * 1024,
  lsDefaultLimit: 500,
  lsMaxLimit: 5000,
  globDefaultLimit: 1000,
  globMaxLimit: 10_000,
  grepDefaultLimit: 100,
  grepMaxLimit: 2000,
  grepMaxFileBytes: 256 * 1024 * 1024,
  grepMaxLineBytes: 1024 * 1024,
  grepChunkBytes: 64 * 1024,
  grepMaxLineChars: 500,
  grepMaxBytes: 128 * 1024,
  walkMaxFiles: 200_000,
});
