// prom-client's Registry, Counter and Gauge, loaded without the package's index: the index also loads its cluster
// aggregator (node:cluster, child_process), the Pushgateway client and the default process metrics, which no server
// here uses and which cost every process about 8 MB resident. The classes and their types are prom-client's own.

import { createRequire } from "node:module";
import type * as PromClient from "prom-client";

const load = createRequire(import.meta.url);

export const Registry: typeof PromClient.Registry = load("prom-client/lib/registry");
export type Registry = PromClient.Registry;
export const Counter: typeof PromClient.Counter = load("prom-client/lib/counter");
export type Counter<T extends string = string> = PromClient.Counter<T>;
export const Gauge: typeof PromClient.Gauge = load("prom-client/lib/gauge");
export type Gauge<T extends string = string> = PromClient.Gauge<T>;
