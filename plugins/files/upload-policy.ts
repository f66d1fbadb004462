/*
 * What an attachment may be. Attachments land in a directory the agent reads from, so the policy keeps out what
 * would run when opened or executed: native executables and libraries, installers, scripts for the OS shells,
 * by extension, by declared data-URL type and by content (PE, ELF and Mach-O headers), whatever the name says.
 */
import path from "node:path";
import { ApiError } from "../../core/index.js";

export const BLOCKED_EXTENSIONS: ReadonlySet<string> = new Set<string>([
  // native executables, libraries, installers, packages
  "exe",
  "msi",
  "msp",
  "msc",
  "dll",
  "so",
  "dylib",
  "bin",
  "com",
  "scr",
  "cpl",
  "ocx",
  "sys",
  "drv",
  "efi",
  "elf",
  "out",
  "run",
  "app",
  "pkg",
  "dmg",
  "deb",
  "rpm",
  "apk",
  "appimage",
  "jar",
  "gadget",
  "lnk",
  "pif",
  // shell and OS scripts
  "sh",
  "bash",
  "zsh",
  "ksh",
  "csh",
  "fish",
  "command",
  "bat",
  "cmd",
  "ps1",
  "psm1",
  "psd1",
  "vbs",
  "vbe",
  "jse",
  "wsf",
  "wsh",
  "hta",
  "reg",
  "inf",
  "scf",
  "action",
  "workflow",
] as const);

const BLOCKED_MIME = new Set([
  "application/x-msdownload",
  "application/x-msdos-program",
  "application/x-dosexec",
  "application/x-ms-installer",
  "application/x-msi",
  "application/vnd.microsoft.portable-executable",
  "application/x-executable",
  "application/x-elf",
  "application/x-sharedlib",
  "application/x-mach-binary",
  "application/x-apple-diskimage",
  "application/java-archive",
  "application/x-java-archive",
  "application/vnd.android.package-archive",
  "application/x-sh",
  "application/x-shellscript",
  "text/x-shellscript",
  "text/x-sh",
  "application/x-csh",
  "application/x-bat",
  "application/bat",
  "application/x-powershell",
  "application/hta",
  "application/x-ms-shortcut",
]);

/**
 * The stored name: the last segment of whatever path the client sent (browsers may send `C:\fakepath\x.txt`),
 * control and reserved characters replaced, trailing dots and spaces dropped. Dot-files and empty names are refused.
 */
export function sanitizeName(raw: string): string {
  const last = raw.split(/[/\\]/).pop() ?? "";
  const cleaned = last
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
    .replace(/[\x00-\x1f\x7f]/g, "")
    .replace(/[<>:"|?*]/g, "_")
    .trim()
    .replace(/[. ]+$/, "");
  if (!cleaned) throw ApiError.badRequest(`Invalid attachment name: ${JSON.stringify(raw)}`);
  if (cleaned.startsWith(".")) {
    throw ApiError.badRequest(`Invalid attachment name: ${JSON.stringify(raw)} (names may not start with ".")`);
  }
  if (Buffer.byteLength(cleaned) > 200) {
    const ext = path.extname(cleaned).slice(0, 20);
    return truncateUtf8(cleaned.slice(0, cleaned.length - ext.length), 200 - Buffer.byteLength(ext)) + ext;
  }
  return cleaned;
}

function truncateUtf8(s: string, bytes: number): string {
  let out = "";
  for (const ch of s) {
    if (Buffer.byteLength(out + ch) > bytes) break;
    out += ch;
  }
  return out;
}

export function checkExtension(name: string): void {
  const ext = path.extname(name).slice(1).toLowerCase();
  if (BLOCKED_EXTENSIONS.has(ext)) {
    throw ApiError.badRequest(`Executable files cannot be attached (.${ext})`);
  }
}

export interface DataUrl {
  mime: string;
  /** Decoded size computed from the encoded text, before decoding. */
  estimatedBytes: number;
  decode(): Buffer;
}

/** Parses `data:[<mime>][;params][;base64],<data>`; the payload is not decoded yet (the size is checked first). */
export function parseDataUrl(url: string): DataUrl {
  const comma = url.indexOf(",");
  if (!url.startsWith("data:") || comma < 0) throw ApiError.badRequest("Expected a data: URL (data:<type>;base64,...)");
  const header = url
    .slice(5, comma)
    .split(";")
    .map((s) => s.trim());
  const base64 = header.at(-1)?.toLowerCase() === "base64";
  const mime = (header[0] || "text/plain").toLowerCase();
  const payload = url.slice(comma + 1);
  if (base64) {
    if (!/^[A-Za-z0-9+/_\s-]*={0,2}\s*$/.test(payload))
      throw ApiError.badRequest("Invalid base64 data in the data: URL");
    const chars = payload.replace(/[\s=]/g, "").length;
    return { mime, estimatedBytes: Math.floor((chars * 3) / 4), decode: () => Buffer.from(payload, "base64") };
  }
  return {
    mime,
    estimatedBytes: payload.length,
    decode: () => {
      try {
        return Buffer.from(decodeURIComponent(payload), "utf8");
      } catch {
        throw ApiError.badRequest("Invalid percent-encoding in the data: URL");
      }
    },
  };
}

export function checkMime(mime: string): void {
  if (BLOCKED_MIME.has(mime)) throw ApiError.badRequest(`Executable content cannot be attached (${mime})`);
}

/** Native executable formats recognised by their headers, whatever the file is called. */
export function executableFormat(b: Buffer): string | undefined {
  if (b.length >= 4 && b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46) return "ELF";
  if (b.length >= 4) {
    const be = b.readUInt32BE(0);
    const le = b.readUInt32LE(0);
    const macho = [0xfeedface, 0xfeedfacf];
    if (macho.includes(be) || macho.includes(le)) return "Mach-O";
    // 0xcafebabe is also a Java class file: a fat Mach-O has a small architecture count right after it.
    if (be === 0xcafebabe && b.length >= 8 && b.readUInt32BE(4) > 0 && b.readUInt32BE(4) < 20) return "Mach-O";
  }
  if (b.length >= 0x40 && b[0] === 0x4d && b[1] === 0x5a) {
    const pe = b.readUInt32LE(0x3c);
    if (pe + 4 <= b.length && b.readUInt32BE(pe) === 0x50450000) return "PE";
  }
  return undefined;
}
