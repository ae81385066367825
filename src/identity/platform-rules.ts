// The rules a platform caller holds, for SelfSubjectRulesReview (`kubectl auth can-i --list`). The platform's rights
// are predicates (roles, ownership, access rules, projects, the key's scope), not stored rules, so the list is made
// by asking the authorizer's own decision about every served resource, subresource and verb, first for any object
// and then by name for the objects the caller could hold something on. Whatever is listed is what `authorize`
// allows: there is one source of truth. Non-resource URLs are asked about with the pattern itself as the path
// ("/apis/*", "*"): every non-resource check here is an allow-list of exact paths and prefixes, so a pattern that
// passes covers every path below it.

import { resourceVerbs } from "../http/resource-verbs.ts";
import type {
  AuthorizationAttributes,
  NonResourceRule,
  ResourceDefinition,
  ResourceRule,
  SubjectRules,
} from "../registry/types.ts";

/** Verbs the platform checks beyond the served ones (access-checks.ts), on kinds whose fields grant rights. */
const RIGHTS_VERBS = ["bind", "escalate", "makeowner"];
const STATUS_VERBS = ["get", "patch", "update"];
const URL_VERBS = ["delete", "get", "head", "patch", "post", "put"];

export interface PlatformRulesOptions {
  /** The served resources. */
  definitions: readonly ResourceDefinition[];
  namespace: string;
  /** Object names to ask about by name, for one resource (in `namespace` when it is namespaced). */
  names: (group: string, resource: string, namespace: string | undefined) => Iterable<string>;
  /** Non-resource URL patterns to ask about, beyond "*". */
  urls: Iterable<string>;
  /** The authorizer's decision for the caller (attributes without the user). */
  allowed: (request: Omit<AuthorizationAttributes, "user">) => boolean;
}

interface Target {
  subresource?: string;
  verbs: string[];
}

function targetsOf(definition: ResourceDefinition): Target[] {
  const rights = definition.authorization?.grants?.length ? RIGHTS_VERBS : [];
  const targets: Target[] = [{ verbs: [...new Set([...resourceVerbs(definition), ...rights])].sort() }];
  if (definition.statusSubresource) targets.push({ subresource: "status", verbs: STATUS_VERBS });
  for (const [name, handler] of Object.entries(definition.subresources ?? {})) {
    targets.push({ subresource: name, verbs: [...handler.verbs].sort() });
  }
  return targets;
}

function resourceRules(options: PlatformRulesOptions): ResourceRule[] {
  const rules: ResourceRule[] = [];
  const seen = new Set<string>();
  for (const definition of options.definitions) {
    const { group, plural } = definition;
    if (seen.has(`${group}/${plural}`)) continue;
    seen.add(`${group}/${plural}`);
    const namespace = definition.namespaced ? options.namespace : undefined;
    const names = [...new Set(options.names(group, plural, namespace))].sort();
    for (const target of targetsOf(definition)) {
      const resource = target.subresource ? `${plural}/${target.subresource}` : plural;
      const base = { resourceRequest: true, group, resource: plural, subresource: target.subresource, namespace };
      const anyName = target.verbs.filter((verb) => options.allowed({ ...base, verb }));
      if (anyName.length > 0) rules.push({ verbs: anyName, apiGroups: [group], resources: [resource] });
      // Named objects: the verbs allowed on each beyond those allowed on any object, grouped by verb list.
      const byVerbs = new Map<string, string[]>();
      for (const name of names) {
        const verbs = target.verbs.filter(
          (verb) => !anyName.includes(verb) && options.allowed({ ...base, verb, name }),
        );
        if (verbs.length === 0) continue;
        const key = verbs.join(" ");
        byVerbs.set(key, [...(byVerbs.get(key) ?? []), name]);
      }
      for (const [verbs, resourceNames] of byVerbs) {
        rules.push({ verbs: verbs.split(" "), apiGroups: [group], resources: [resource], resourceNames });
      }
    }
  }
  return rules;
}

function nonResourceRules(options: PlatformRulesOptions): NonResourceRule[] {
  const allowed = (verb: string, path: string) => options.allowed({ resourceRequest: false, verb, path });
  const everywhere = URL_VERBS.filter((verb) => allowed(verb, "*"));
  const rules: NonResourceRule[] = [];
  if (everywhere.length > 0) rules.push({ verbs: everywhere, nonResourceURLs: ["*"] });
  const byVerbs = new Map<string, string[]>();
  for (const url of [...new Set(options.urls)].filter((u) => u !== "*").sort()) {
    const verbs = URL_VERBS.filter((verb) => !everywhere.includes(verb) && allowed(verb, url));
    if (verbs.length === 0) continue;
    const key = verbs.join(" ");
    byVerbs.set(key, [...(byVerbs.get(key) ?? []), url]);
  }
  for (const [verbs, nonResourceURLs] of byVerbs) rules.push({ verbs: verbs.split(" "), nonResourceURLs });
  return rules;
}

/** Every rule the caller holds over the served resources and the given URLs, as the authorizer decides them. */
export function platformRules(options: PlatformRulesOptions): SubjectRules {
  return { resourceRules: resourceRules(options), nonResourceRules: nonResourceRules(options), incomplete: false };
}
