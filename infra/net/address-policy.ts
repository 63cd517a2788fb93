// Which addresses and URLs a server-side request to an address an administrator typed (identity providers, webhook
// receivers, the analysis provider) may reach (SSRF guard; docs/security.md). Refused: every non-public address
// (private, loopback, link-local with the cloud metadata service at 169.254.169.254, carrier-grade NAT, multicast,
// reserved, documentation ranges) and their IPv6 equivalents (unique-local, link-local, IPv4-mapped,
// IPv4-translated, NAT64, 6to4, Teredo). Hosts named in the caller's allow-list (OIDC_ALLOWED_HOSTS,
// WEBHOOK_ALLOWED_HOSTS, ANALYSIS_ALLOWED_HOSTS: `host` or `host:port`) are exempt, and only they may be reached
// over plain http.
import { BlockList, isIP } from 'node:net';

// Two lists: Node's BlockList matches IPv4 addresses against IPv6 rules as IPv4-mapped ones, so the IPv6 rule for
// ::ffff:0:0/96 would refuse every IPv4 address.
const refusedV4 = new BlockList();
const refusedV6 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  refusedV4.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible addresses
  ['::ffff:0:0', 96], // IPv4-mapped
  ['::ffff:0:0:0', 96], // IPv4-translated (RFC 2765 SIIT, ::ffff:0:a.b.c.d)
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 32], // Teredo
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const)
  refusedV6.addSubnet(network, prefix, 'ipv6');

/** Whether a resolved address (or an IP literal) is one a provider request must not reach. */
export const isRefusedAddress = (address: string): boolean => {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return true;
  return family === 4 ? refusedV4.check(bare, 'ipv4') : refusedV6.check(bare, 'ipv6');
};

/** `host` or `host:port` entries (lower-case; IPv6 in brackets), from a comma-separated OIDC_ALLOWED_HOSTS. */
export const parseAllowedHosts = (value: string | undefined): readonly string[] =>
  (value ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');

const defaultPort = (url: URL): string => url.port || (url.protocol === 'https:' ? '443' : '80');

/** Whether the URL's host is exempt from the address check (an entry without a port allows every port). */
export const isAllowedHost = (allowed: readonly string[], url: URL): boolean => {
  const host = url.hostname.toLowerCase();
  return allowed.some((entry) => entry === host || entry === `${host}:${defaultPort(url)}`);
};

/**
 * Why a provider URL is refused before any request (scheme, credentials, an IP literal that is not public), or
 * undefined. Host names are checked again when they resolve (guarded-fetch.ts), on every redirect hop.
 */
export const urlProblem = (allowed: readonly string[], raw: string): string | undefined => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.hash !== '') return 'must not have a fragment';
  const exempt = isAllowedHost(allowed, url);
  if (url.protocol === 'http:' && !exempt) return 'must be an https URL';
  if (!exempt && isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0 && isRefusedAddress(url.hostname))
    return 'must not point to a private, loopback, link-local or otherwise internal address';
  return undefined;
};
