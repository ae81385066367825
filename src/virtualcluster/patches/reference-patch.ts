import type { CompiledReference } from "./compile.ts";
import { formatContextPath } from "./path-format.ts";
import { isJsonObject, type PathMatch, setAtMatch, valueAtPath } from "./path-navigate.ts";
import type { PathSegment } from "./path-parse.ts";
import type { ApplyOptions, ReferencedObject } from "./types.ts";

/** What a reference patch needs besides the match: the namespaces references default to. */
export interface ReferenceScope {
  options: ApplyOptions;
  /** Virtual namespace of the synced object. */
  virtualNamespace: string | undefined;
  /** Host namespace of the synced object (toVirtual direction). */
  hostNamespace: string | undefined;
  patch: string;
}

const nonEmptyString = (value: unknown): value is string => typeof value === "string" && value !== "";

function stringAt(root: unknown, segments: PathSegment[] | undefined): PathMatch | undefined {
  if (!segments) return undefined;
  const found = valueAtPath(root, segments);
  return found && nonEmptyString(found.value) ? found : undefined;
}

/**
 * Rewrites the object name at `match` (or at namePath below it) to the target side's name, and the namespace at
 * namespacePath to the target side's namespace. Returns the referenced object, or undefined when there is no name
 * or (toVirtual) the host name cannot be mapped back, in which case nothing changes.
 */
export function applyReference(
  reference: CompiledReference,
  match: PathMatch,
  scope: ReferenceScope,
): ReferencedObject | undefined {
  const { translator, direction } = scope.options;
  if (reference.namePath && !isJsonObject(match.value)) return undefined;
  const nameMatch = reference.namePath ? stringAt(match.value, reference.namePath) : match;
  if (!nameMatch || !nonEmptyString(nameMatch.value)) return undefined;
  const name = nameMatch.value;
  const namespaceMatch = stringAt(match.value, reference.namespacePath);
  const apiVersion = (stringAt(match.value, reference.apiVersionPath)?.value as string) ?? reference.apiVersion;
  const kind = (stringAt(match.value, reference.kindPath)?.value as string) ?? reference.kind;
  const namespaceValue = namespaceMatch?.value as string | undefined;

  let source: { name: string; namespace: string };
  let target: { name: string; namespace: string };
  if (direction === "toHost") {
    const namespace = namespaceValue ?? scope.virtualNamespace ?? "";
    source = { name, namespace };
    target = { name: translator.hostName(name, namespace), namespace: translator.hostNamespace(namespace) };
  } else {
    const hostNamespace = namespaceValue ?? scope.hostNamespace ?? "";
    const virtual = translator.virtualName(name, hostNamespace, scope.virtualNamespace);
    if (!virtual) return undefined;
    source = { name, namespace: hostNamespace };
    target = virtual;
  }
  setAtMatch(nameMatch, target.name);
  if (namespaceMatch) setAtMatch(namespaceMatch, target.namespace);
  const path = formatContextPath(reference.namePath ? [...match.keys, ...nameMatch.keys] : match.keys);
  return { apiVersion, kind, source, target, patch: scope.patch, path };
}
