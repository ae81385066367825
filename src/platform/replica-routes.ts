// GET /platform/replicas: the running platform replicas (replica-presence.ts) and which one answered, as JSON. A
// non-resource path: admins and viewers read it (`kubectl get --raw /platform/replicas`), as they read /metrics.

import type { FastifyInstance } from "fastify";
import type { Replica } from "./replica-presence.ts";

export const REPLICAS_PATH = "/platform/replicas";

export interface ReplicaRoutesOptions {
  replicas(): Promise<Replica[]>;
  /** The identity of the replica answering. */
  identity: string;
}

export function replicaRoutes(options: ReplicaRoutesOptions): (app: FastifyInstance) => void {
  return (app) => {
    app.get(REPLICAS_PATH, async (_request, reply) => {
      const body = { kind: "ReplicaList", servedBy: options.identity, items: await options.replicas() };
      return reply
        .code(200)
        .header("content-type", "application/json")
        .header("cache-control", "no-store")
        .send(JSON.stringify(body));
    });
  };
}
