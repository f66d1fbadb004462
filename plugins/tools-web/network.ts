import { BlockList, isIP } from "node:net";

/** Loopback, private, link-local, CGNAT, multicast and reserved ranges: what `blockPrivateNetworks` refuses. */
const PRIVATE_RANGES = {
  ipv4: [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4],
  ],
  ipv6: [
    ["::", 128],
    ["::1", 128],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8],
  ],
} as const;

let privateRanges: BlockList | undefined;

/** The ranges as a BlockList, made on first use (node loads its BlockList when one is first made). */
function ranges(): BlockList {
  if (privateRanges) return privateRanges;
  const list = new BlockList();
  for (const type of ["ipv4", "ipv6"] as const) {
    for (const [net, prefix] of PRIVATE_RANGES[type]) list.addSubnet(net, prefix, type);
  }
  privateRanges = list;
  return list;
}

/** `::ffff:7f00:1` / `::ffff:127.0.0.1` -> `127.0.0.1`, so a mapped address cannot smuggle a private IPv4 through. */
function unmapIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const hi = Number.parseInt(hex[1] ?? "0", 16);
  const lo = Number.parseInt(hex[2] ?? "0", 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return ranges().check(address, "ipv4");
  if (family === 6) {
    const v4 = unmapIpv4(address);
    return v4 ? ranges().check(v4, "ipv4") : ranges().check(address, "ipv6");
  }
  return false;
}

/**
 * The private address `url`'s host resolves to, or undefined when every address is public.
 * Known gap: fetch resolves the name again, so a DNS server that answers differently the second time (rebinding)
 * is not caught. This is a guard against accidents and plain prompt-injected URLs, not a network sandbox.
 */
export async function findPrivateAddress(url: URL): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return host;
  if (isIP(host)) return isPrivateAddress(host) ? host : undefined;
  const addresses = await process.getBuiltinModule("node:dns/promises").lookup(host, { all: true, verbatim: true });
  return addresses.find((a) => isPrivateAddress(a.address))?.address;
}
