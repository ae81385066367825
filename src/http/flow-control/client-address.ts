// Who a connection or an unauthenticated request counts as: its client address, with IPv4-mapped IPv6 written as
// IPv4 and IPv6 taken by its /64 (one host is usually given a whole /64, so counting single IPv6 addresses would let
// one client open a fresh "client" per connection).

const MAPPED_IPV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

export function clientKey(address: string | undefined): string {
  if (!address) return "unknown";
  const mapped = MAPPED_IPV4.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(":")) return address;
  return `${expandIpv6(address).slice(0, 4).join(":")}::/64`;
}

/** The eight groups of an IPv6 address (zone dropped, "::" expanded, leading zeros removed). */
function expandIpv6(address: string): string[] {
  const bare = address.split("%")[0].toLowerCase();
  const [head, tail] = bare.includes("::") ? bare.split("::") : [bare, undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array.from({ length: Math.max(0, missing) }, () => "0"), ...right];
  return groups.map((group) => group.replace(/^0+(?=.)/, "") || "0");
}
