// Cluster IPs and node ports of Services. What is in use is what stored Services hold (fed by a storage informer,
// so a deleted Service's addresses are free again once its deletion is seen), plus short-lived reservations for
// creates and updates still on their way to storage (a create that then fails frees its reservation on expiry).

import { isIPv4 } from "node:net";
import type { Service } from "./service-schema.ts";

/** Why an address could not be allocated; `full` is the server's problem, the rest are the client's. */
export class AllocationError extends Error {
  readonly full: boolean;

  constructor(message: string, full = false) {
    super(message);
    this.name = "AllocationError";
    this.full = full;
  }
}

export interface ServiceAddressAllocator {
  readonly serviceCidr: string;
  /** The first address of the range: the `kubernetes` Service's. */
  readonly firstAddress: string;
  allocateClusterIP(requested?: string): string;
  allocateNodePort(requested?: number): number;
}

export interface ServiceAddressOptions {
  /** IPv4 CIDR, default 10.96.0.0/12. */
  serviceCidr?: string;
  /** Default 30000-32767. */
  nodePorts?: { min: number; max: number };
  /** How long a reservation not yet seen in storage holds its address. Default 60 s. */
  reservationMs?: number;
  now?: () => number;
  random?: () => number;
}

function ipToNumber(ip: string): number {
  return ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function numberToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

interface Held {
  ips: string[];
  ports: number[];
}

/** Every cluster IP and node port a Service holds. */
export function heldBy(service: Service): Held {
  const spec = service.spec ?? {};
  const ips = [...new Set([spec.clusterIP, ...(spec.clusterIPs ?? [])])].filter(
    (ip): ip is string => typeof ip === "string" && ip !== "" && ip !== "None",
  );
  const ports = (spec.ports ?? []).map((p) => p.nodePort).filter((p): p is number => typeof p === "number" && p > 0);
  if (typeof spec.healthCheckNodePort === "number" && spec.healthCheckNodePort > 0)
    ports.push(spec.healthCheckNodePort);
  return { ips, ports };
}

/**
 * How many values at the bottom of a range are kept for those users ask for (Kubernetes' static subranges: KEP-3070
 * for service addresses, step 16 and at most 256; KEP-3668 for node ports, step 32 and at most 128): values are
 * handed out from above it first, so a requested address or port is rarely taken by chance already.
 */
function staticBand(size: number, step: number, max: number): number {
  if (size < 16) return 0;
  return Math.min(Math.max(16, Math.floor(size / step)), max);
}

export class ServiceAddresses implements ServiceAddressAllocator {
  readonly serviceCidr: string;
  readonly firstAddress: string;
  private readonly base: number;
  private readonly size: number;
  private readonly portMin: number;
  private readonly portMax: number;
  private readonly reservationMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  /** Stored services by key, and how many of them hold each address. */
  private readonly byKey = new Map<string, Held>();
  private readonly ips = new Map<string, number>();
  private readonly ports = new Map<number, number>();
  private readonly reservedIps = new Map<string, number>();
  private readonly reservedPorts = new Map<number, number>();

  constructor(options: ServiceAddressOptions = {}) {
    this.serviceCidr = options.serviceCidr ?? "10.96.0.0/12";
    const [address, bitsText] = this.serviceCidr.split("/");
    const bits = Number(bitsText);
    if (!isIPv4(address) || !Number.isInteger(bits) || bits < 1 || bits > 30) {
      throw new Error(`service CIDR ${this.serviceCidr} must be an IPv4 CIDR with a prefix of 1 to 30 bits`);
    }
    this.size = 2 ** (32 - bits);
    this.base = ipToNumber(address) - (ipToNumber(address) % this.size);
    this.firstAddress = numberToIp(this.base + 1);
    this.portMin = options.nodePorts?.min ?? 30000;
    this.portMax = options.nodePorts?.max ?? 32767;
    this.reservationMs = options.reservationMs ?? 60_000;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  // ---- what storage holds (the informer calls these) ----------------------------------------------------------

  reset(services: { key: string; service: Service }[]): void {
    this.byKey.clear();
    this.ips.clear();
    this.ports.clear();
    for (const { key, service } of services) this.set(key, service);
  }

  set(key: string, service: Service): void {
    this.remove(key);
    const held = heldBy(service);
    this.byKey.set(key, held);
    for (const ip of held.ips) {
      this.ips.set(ip, (this.ips.get(ip) ?? 0) + 1);
      this.reservedIps.delete(ip);
    }
    for (const port of held.ports) {
      this.ports.set(port, (this.ports.get(port) ?? 0) + 1);
      this.reservedPorts.delete(port);
    }
  }

  remove(key: string): void {
    const held = this.byKey.get(key);
    if (!held) return;
    this.byKey.delete(key);
    for (const ip of held.ips) decrement(this.ips, ip);
    for (const port of held.ports) decrement(this.ports, port);
  }

  // ---- allocation ---------------------------------------------------------------------------------------------

  allocateClusterIP(requested?: string): string {
    if (requested) {
      const n = isIPv4(requested) ? ipToNumber(requested) : Number.NaN;
      if (!(n > this.base && n < this.base + this.size - 1)) {
        throw new AllocationError(
          `failed to allocate IP ${requested}: the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${this.serviceCidr}`,
        );
      }
      if (this.ipTaken(requested)) {
        throw new AllocationError(`failed to allocate IP ${requested}: provided IP is already allocated`);
      }
      this.reservedIps.set(requested, this.now() + this.reservationMs);
      return requested;
    }
    // Offsets 2 .. size-2: not the network address, not the first address (kept for `kubernetes`), not broadcast.
    // The upper band first: offsets up to the static band are left for addresses users ask for.
    const band = staticBand(this.size, 16, 256);
    const free = (offset: number) => !this.ipTaken(numberToIp(this.base + offset));
    const offset =
      this.pick(Math.max(2, band + 1), this.size - 1, free) ?? this.pick(2, Math.min(band + 1, this.size - 1), free);
    if (offset !== undefined) {
      const ip = numberToIp(this.base + offset);
      this.reservedIps.set(ip, this.now() + this.reservationMs);
      return ip;
    }
    throw new AllocationError("failed to allocate a serviceIP: range is full", true);
  }

  allocateNodePort(requested?: number): number {
    if (requested !== undefined) {
      if (requested < this.portMin || requested > this.portMax) {
        throw new AllocationError(
          `provided port is not in the valid range. The range of valid ports is ${this.portMin}-${this.portMax}`,
        );
      }
      if (this.portTaken(requested)) throw new AllocationError("provided port is already allocated");
      this.reservedPorts.set(requested, this.now() + this.reservationMs);
      return requested;
    }
    const band = this.portMin + staticBand(this.portMax - this.portMin + 1, 32, 128);
    const free = (port: number) => !this.portTaken(port);
    const port = this.pick(band, this.portMax + 1, free) ?? this.pick(this.portMin, band, free);
    if (port !== undefined) {
      this.reservedPorts.set(port, this.now() + this.reservationMs);
      return port;
    }
    throw new AllocationError("failed to allocate a nodePort: range is full", true);
  }

  /** A free value of [low, high), looked for from a random start; undefined when every one is taken. */
  private pick(low: number, high: number, free: (value: number) => boolean): number | undefined {
    const count = high - low;
    if (count <= 0) return undefined;
    const start = Math.floor(this.random() * count);
    for (let i = 0; i < count; i++) {
      const value = low + ((start + i) % count);
      if (free(value)) return value;
    }
    return undefined;
  }

  /** Whether a stored Service holds the address (tests and the kubernetes Service reconciler use it). */
  inUse(ip: string): boolean {
    return this.ips.has(ip);
  }

  private ipTaken(ip: string): boolean {
    return this.ips.has(ip) || reserved(this.reservedIps, ip, this.now());
  }

  private portTaken(port: number): boolean {
    return this.ports.has(port) || reserved(this.reservedPorts, port, this.now());
  }
}

function decrement<K>(map: Map<K, number>, key: K): void {
  const n = (map.get(key) ?? 0) - 1;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}

function reserved<K>(map: Map<K, number>, key: K, now: number): boolean {
  const until = map.get(key);
  if (until === undefined) return false;
  if (until > now) return true;
  map.delete(key);
  return false;
}
