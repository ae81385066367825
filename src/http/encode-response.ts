// The encode step: a registry result -> response body and Content-Type, as JSON, YAML or a meta.k8s.io Table.

import { isPlainObject, type KubeList, type KubeObject } from "../apimachinery/types.ts";
import type { ApiWatchEvent, ResourceDefinition } from "../registry/types.ts";
import { encodeBody } from "./codec.ts";
import type { ResponseFormat } from "./negotiation.ts";
import type { IncludeObject } from "./query-options.ts";
import { toTable } from "./table.ts";
import { encodeWatchEventJson, type WatchEventEncoder } from "./watch.ts";

export interface TableTarget {
  definition: ResourceDefinition;
  includeObject: IncludeObject;
  now: Date;
}

export interface EncodedBody {
  body: string;
  contentType: string;
}

function tableContentType(version: string): string {
  return `application/json;as=Table;v=${version};g=meta.k8s.io`;
}

function isList(value: unknown): value is KubeList {
  return isPlainObject(value) && Array.isArray(value.items);
}

/** Converts an object or list to a Table (Status objects are never converted). */
function asTable(value: unknown, version: string, target: TableTarget): object {
  const options = { includeObject: target.includeObject, now: target.now };
  const table = isList(value)
    ? (toTable(target.definition, value.items, { ...options, listMeta: value.metadata }) as Record<string, unknown>)
    : (toTable(target.definition, [value as KubeObject], {
        ...options,
        listMeta: { resourceVersion: (value as KubeObject).metadata?.resourceVersion },
      }) as Record<string, unknown>);
  if (version !== "v1") table.apiVersion = `meta.k8s.io/${version}`;
  return table;
}

export function encodeResponse(
  value: unknown,
  format: ResponseFormat,
  pretty: boolean,
  target?: TableTarget,
): EncodedBody {
  if (format.kind === "yaml") return { body: encodeBody(value, "yaml"), contentType: "application/yaml" };
  if (format.kind === "table" && target && isPlainObject(value) && value.kind !== "Status") {
    return {
      body: encodeBody(asTable(value, format.version, target), "json", pretty),
      contentType: tableContentType(format.version),
    };
  }
  return { body: encodeBody(value, "json", pretty), contentType: "application/json" };
}

/** The per-event encoder of a watch: plain JSON, or one-row Tables (bookmarks as empty Tables) for kubectl get -w. */
export function watchEventEncoder(format: ResponseFormat, target: TableTarget): WatchEventEncoder {
  if (format.kind !== "table") return encodeWatchEventJson;
  const version = format.version;
  return (event: ApiWatchEvent) => {
    let object: unknown = event.object;
    if (event.type === "BOOKMARK") {
      const table = toTable(target.definition, [], {
        listMeta: { resourceVersion: (event.object as KubeObject).metadata?.resourceVersion },
      }) as Record<string, unknown>;
      if (version !== "v1") table.apiVersion = `meta.k8s.io/${version}`;
      object = table;
    } else if (event.type !== "ERROR") {
      object = asTable(event.object, version, { ...target, now: new Date() });
    }
    return JSON.stringify({ type: event.type, object });
  };
}
