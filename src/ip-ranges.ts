/**
 * CIDR ranges, IPv4 and IPv6: the per-key IP allowlists and WSOPS_TRUSTED_PROXIES (ADR 29).
 * Matching is node:net's BlockList (the address family's rules, IPv4-mapped IPv6 included).
 */
import { BlockList, isIP } from 'node:net';

export const CIDR_EXAMPLE = 'e.g. 203.0.113.0/24, 198.51.100.7 or 2001:db8::/48';

/**
 * The canonical text of one range (`a.b.c.d/n`, `x::/n`; a bare address is its /32 or /128),
 * or throws an Error whose message says what is wrong and shows the form expected.
 */
export function canonicalCidr(text: string): string {
  const trimmed = text.trim();
  const [address = '', prefixText, extra] = trimmed.split('/');
  const family = isIP(address);
  const max = family === 4 ? 32 : 128;
  const bad = (why: string) => new Error(`"${trimmed.slice(0, 60)}" is not a CIDR range: ${why} (${CIDR_EXAMPLE})`);
  if (family === 0) throw bad('the address is neither IPv4 nor IPv6');
  if (extra !== undefined) throw bad('it holds more than one "/"');
  if (prefixText === undefined) return `${address.toLowerCase()}/${max}`;
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) {
    throw bad(`the prefix length after "/" must be a whole number from 0 to ${max}`);
  }
  return `${address.toLowerCase()}/${Number(prefixText)}`;
}

/** Canonical, deduplicated ranges of a list (commas or spaces between them); throws on the first bad one. */
export function canonicalCidrs(items: readonly string[]): string[] {
  const out = new Set<string>();
  for (const item of items.flatMap((i) => i.split(/[\s,]+/)).filter(Boolean)) out.add(canonicalCidr(item));
  return [...out];
}

/** Addresses whose answer a matcher remembers; beyond this it starts again (bounded memory). */
const REMEMBERED_ADDRESSES = 1024;

/**
 * A test of client addresses against canonical ranges. A BlockList check parses the address in
 * C++ on every call, a noticeable part of a small request (ADR 29); a key's
 * clients are few and come back, so each matcher remembers its answers (a Map lookup).
 */
export function addressMatcher(cidrs: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefix = ''] = cidr.split('/');
    list.addSubnet(address, Number(prefix), isIP(address) === 4 ? 'ipv4' : 'ipv6');
  }
  const answers = new Map<string, boolean>();
  return (address) => {
    let allowed = answers.get(address);
    if (allowed === undefined) {
      const family = isIP(address);
      allowed = family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
      if (answers.size >= REMEMBERED_ADDRESSES) answers.clear();
      answers.set(address, allowed);
    }
    return allowed;
  };
}
