// Keeps `default/kubernetes` describing this API server, as kube-apiserver's endpoint reconciler does: a ClusterIP
// Service on the first address of the service CIDR, port 443 to the server's port, and Endpoints and an
// EndpointSlice with the server's address. Re-created or corrected whenever one of them is deleted or changed;
// writes only a difference.

import { isIPv6 } from "node:net";
import { isDeepStrictEqual } from "node:util";
import type { Logger } from "pino";
import { isStatusError } from "../apimachinery/errors.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import type { InformerHandler } from "../auth/store-informer.ts";
import type { Registry } from "../registry/registry.ts";
import type { GenericStore } from "../registry/store.ts";
import { systemContext } from "../registry/system-context.ts";
import type { WatchEvent } from "../storage/types.ts";

const NAME = "kubernetes";
const NAMESPACE = "default";
const MANAGER = "kube-apiserver";
const SERVICE_KEY = `/core/services/${NAMESPACE}/${NAME}`;
const ENDPOINTS_KEY = `/core/endpoints/${NAMESPACE}/${NAME}`;
const SLICE_KEY = `/discovery.k8s.io/endpointslices/${NAMESPACE}/${NAME}`;

export interface KubernetesServiceOptions {
  registry: Registry;
  /** The first address of the service CIDR. */
  clusterIP: string;
  logger?: Logger;
}

export class KubernetesServiceReconciler implements InformerHandler {
  readonly prefixes = [SERVICE_KEY, ENDPOINTS_KEY, SLICE_KEY];
  private readonly options: KubernetesServiceOptions;
  /** Where clients reach this server; known once it listens. */
  private target?: { address: string; port: number };
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(options: KubernetesServiceOptions) {
    this.options = options;
  }

  reset(): void {}

  apply(event: WatchEvent): void {
    if (this.prefixes.includes(event.record.key)) this.schedule();
  }

  stop(): void {
    this.stopped = true;
  }

  /** Sets the server's address and port and reconciles. */
  start(address: string, port: number): Promise<void> {
    this.target = { address, port };
    return this.schedule();
  }

  /** Brings both objects to their desired state (coalescing concurrent calls into one more pass). */
  schedule(): Promise<void> {
    if (this.stopped || !this.target) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.ensure();
        } catch (error) {
          this.options.logger?.warn({ err: String(error) }, "reconciling the default/kubernetes service failed");
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async ensure(): Promise<void> {
    const { registry, clusterIP } = this.options;
    const { address, port } = this.target ?? { address: "", port: 0 };
    const services = registry.genericStore("", "services");
    const endpoints = registry.genericStore("", "endpoints");
    const slices = registry.genericStore("discovery.k8s.io", "endpointslices");
    if (!services || !endpoints) return;
    const ports = [{ name: "https", protocol: "TCP", port: 443, targetPort: port }];
    await this.converge(
      services,
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: NAME, namespace: NAMESPACE, labels: { component: "apiserver", provider: "kubernetes" } },
        spec: { type: "ClusterIP", clusterIP, ports, sessionAffinity: "None" },
      },
      (live) => isDeepStrictEqual(pick((live.spec as { ports?: object[] })?.ports), ports),
      { spec: { ports } },
    );
    const subsets = [{ addresses: [{ ip: address }], ports: [{ name: "https", port, protocol: "TCP" }] }];
    await this.converge(
      endpoints,
      {
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: NAME, namespace: NAMESPACE, labels: { "endpointslice.kubernetes.io/skip-mirror": "true" } },
        subsets,
      },
      (live) => isDeepStrictEqual(live.subsets, subsets),
      { subsets },
    );
    if (!slices) return;
    // The Endpoints skip mirroring: this server writes their slice itself, as kube-apiserver does.
    const endpointsOfSlice = [{ addresses: [address], conditions: { ready: true } }];
    const slicePorts = [{ name: "https", port, protocol: "TCP" }];
    await this.converge(
      slices,
      {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: { name: NAME, namespace: NAMESPACE, labels: { "kubernetes.io/service-name": NAME } },
        addressType: isIPv6(address) ? "IPv6" : "IPv4",
        endpoints: endpointsOfSlice,
        ports: slicePorts,
      },
      (live) => isDeepStrictEqual(live.endpoints, endpointsOfSlice) && isDeepStrictEqual(live.ports, slicePorts),
      { endpoints: endpointsOfSlice, ports: slicePorts },
    );
  }

  private async converge(
    store: GenericStore,
    desired: KubeObject,
    matches: (live: KubeObject) => boolean,
    patch: object,
  ): Promise<void> {
    const context = systemContext("system:apiserver", MANAGER);
    const ref = { namespace: NAMESPACE, name: NAME };
    let live: KubeObject | undefined;
    try {
      live = await store.get(context, ref);
    } catch (error) {
      if (!(isStatusError(error) && error.reason === "NotFound")) throw error;
    }
    if (!live) {
      await store.create(context, NAMESPACE, desired, { fieldManager: MANAGER });
      return;
    }
    if (!matches(live)) await store.patch(context, ref, "merge", patch, { fieldManager: MANAGER });
  }
}

/** The service port fields this reconciler owns (nodePort and appProtocol are left alone). */
function pick(ports: object[] | undefined): object[] | undefined {
  return ports?.map((p) => {
    const { name, protocol, port, targetPort } = p as Record<string, unknown>;
    return { name, protocol, port, targetPort };
  });
}
