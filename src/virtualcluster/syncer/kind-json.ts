// Small JSON helpers the kind declarations share.

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** ports[].protocol defaults to TCP on the server. */
export function withProtocolDefault(ports: unknown): unknown {
  if (!Array.isArray(ports)) return ports;
  return ports.map((port) => (isObject(port) ? { ...port, protocol: port.protocol ?? "TCP" } : port));
}
