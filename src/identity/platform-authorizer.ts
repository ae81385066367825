// The platform's authorizer: a request is allowed when the caller's rights allow it (rights.ts, and the projects'
// members and owners, project-rights.ts) and its access key's scope lets it through. Scoped keys never create or
// change access keys or passwords: a scope cannot be widened through the key itself; for the same reason a scoped key
// gets a kubeconfig (whose credentials reach the whole virtual cluster) only when its scope covers that instance.
// A key with the role virtualcluster writes only the instances bound to its owner (runtime-binding.ts).
// Denials carry a reason only where the verb alone does not say why. `rulesFor` (kubectl auth can-i --list) lists
// what `decide` allows (platform-rules.ts), so the list and real authorization cannot disagree.

import type { KubeObject } from "../apimachinery/types.ts";
import { GROUP } from "../apis/management/v1/common.ts";
import type { Project } from "../apis/management/v1/project-schema.ts";
import type {
  AuthorizationAttributes,
  AuthorizationDecision,
  Authorizer,
  ResourceDefinition,
  SubjectRules,
  UserInfo,
} from "../registry/types.ts";
import type { AuthIndex } from "./auth-index.ts";
import { platformRules } from "./platform-rules.ts";
import { ADMIN_ROLE, isSystem, type Principal, principalOf } from "./principal.ts";
import { type ProjectIndex, projectEntry } from "./project-index.ts";
import { projectDecision, projectRole } from "./project-rights.ts";
import { type FactsLookup, mintedBy } from "./resource-facts.ts";
import { hasRight } from "./rights.ts";
import { runtimeBindingDenial } from "./runtime-binding.ts";
import { DISCOVERY_URLS, LOGOUT_URL } from "./scope.ts";
import type { Visibility } from "./visible-objects-view.ts";

const ALLOWED: AuthorizationDecision = { allowed: true };
const DENIED: AuthorizationDecision = { allowed: false };
const OUT_OF_SCOPE: AuthorizationDecision = { allowed: false, reason: "the access key's scope does not allow it" };
const SCOPED_ESCALATION: AuthorizationDecision = {
  allowed: false,
  reason: "a scoped access key cannot create or change access keys or passwords",
};

const KUBECONFIG_BEYOND_SCOPE: AuthorizationDecision = {
  allowed: false,
  reason:
    "a kubeconfig grants access to the whole virtual cluster, which the access key's scope does not cover (use a key scoped to the project or to this virtual cluster)",
};
/** What the access key of a token-form kubeconfig may do on its instance: the caller's scope must allow all of it. */
const KUBECONFIG_KEY_VERBS = ["get", "update", "patch", "delete"];

// Fresh objects per answer: the review hands them to the response.
const everything = (): SubjectRules => ({
  resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
  nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
  incomplete: false,
});
const nothing = (): SubjectRules => ({ resourceRules: [], nonResourceRules: [], incomplete: false });

/** An admin whose key has no scope: every request is allowed. */
const unrestricted = (principal: Principal) => !principal.scope && principal.roles.has(ADMIN_ROLE);

export interface PlatformAuthorizerOptions {
  index: AuthIndex;
  projectNamespacePrefix: () => string;
  /** The authorization facts of the served resources. */
  facts: FactsLookup;
  /** The served resources, which a rules review asks about. */
  definitions?: () => readonly ResourceDefinition[];
}

export class PlatformAuthorizer implements Authorizer {
  private readonly index: AuthIndex;
  private readonly projectNamespacePrefix: () => string;
  private readonly facts: FactsLookup;
  private readonly definitions: () => readonly ResourceDefinition[];
  private projects?: { index: ProjectIndex; fresh: () => Promise<void> };

  constructor(options: PlatformAuthorizerOptions) {
    this.index = options.index;
    this.projectNamespacePrefix = options.projectNamespacePrefix;
    this.facts = options.facts;
    this.definitions = options.definitions ?? (() => []);
  }

  /** Projects grant rights to their owners and members (attached once the project index runs). */
  useProjects(index: ProjectIndex, fresh: () => Promise<void>): void {
    this.projects = { index, fresh };
  }

  async authorize(request: AuthorizationAttributes): Promise<AuthorizationDecision> {
    const decision = this.decide(request);
    if (decision.allowed || !this.projects || !this.aboutProjects(request)) return decision;
    // A project written just before may not be indexed yet: catch up, then decide again.
    await this.projects.fresh();
    return this.decide(request);
  }

  decide(request: AuthorizationAttributes): AuthorizationDecision {
    const principal = principalOf(request.user);
    if (!principal) return isSystem(request.user) ? ALLOWED : DENIED;
    if (unrestricted(principal)) return ALLOWED;
    const prefix = this.projectNamespacePrefix();
    if (principal.scope) {
      if (!principal.scope(request, prefix)) return OUT_OF_SCOPE;
      // A credential nothing bounds would widen the key's own scope; one that reaches a whole object needs all of it.
      const minted = mintedBy(this.facts, request);
      if (minted?.boundedBy === false) return SCOPED_ESCALATION;
      if (minted?.boundedBy === "instance" && !this.scopeCoversInstance(principal, request, prefix))
        return KUBECONFIG_BEYOND_SCOPE;
    }
    // A runtime writes only the instances it reports for, whatever its owner may do otherwise.
    const unbound = runtimeBindingDenial(principal, request, this.index);
    if (unbound) return unbound;
    if (hasRight(principal, request, this.index, this.facts)) return ALLOWED;
    if (!this.projects) return DENIED;
    return projectDecision(principal, request, this.projects.index, prefix) ?? DENIED;
  }

  /** Who sees which objects of `resource` in lists and watches (VisibleObjectsView): those the caller may `get`. */
  visibility(resource: "projects" | "virtualclusterinstances"): Visibility {
    return {
      readsAll: (user) => this.decide({ user, ...readRequest(resource) }).allowed,
      sees: (user, object) =>
        resource === "projects"
          ? this.seesProject(user, object)
          : this.decide({ user, ...readRequest(resource, object) }).allowed,
    };
  }

  /**
   * `get` on the project, with its owner and members read from the object itself rather than the project index: a
   * list or watch may be ahead of the index, and a watcher must see a membership change in the event that makes it.
   */
  private seesProject(user: UserInfo, project: KubeObject): boolean {
    const request = { user, ...readRequest("projects", project) };
    const principal = principalOf(user);
    if (!principal) return isSystem(user);
    if (unrestricted(principal)) return true;
    if (principal.scope && !principal.scope(request, this.projectNamespacePrefix())) return false;
    if (hasRight(principal, request, this.index, this.facts)) return true;
    return projectRole(principal, projectEntry(project as Project)) !== undefined;
  }

  async rulesFor(user: UserInfo, namespace: string): Promise<SubjectRules> {
    const principal = principalOf(user);
    if (!principal) return isSystem(user) ? everything() : nothing();
    if (unrestricted(principal)) return everything();
    await this.projects?.fresh();
    return platformRules({
      definitions: this.definitions(),
      namespace,
      names: (group, resource, ns) => this.candidateNames(principal, group, resource, ns),
      urls: [...DISCOVERY_URLS, LOGOUT_URL, ...scopeStrings(principal).urls],
      allowed: (request) => this.decide({ ...request, user }).allowed,
    });
  }

  /**
   * Names a caller may hold rights on beyond any object of the kind: its own user and teams, objects whose owner or
   * access rules may name it, projects, and the names its key's scope lists.
   */
  private *candidateNames(
    principal: Principal,
    group: string,
    resource: string,
    namespace: string | undefined,
  ): Generator<string> {
    yield principal.name;
    for (const team of principal.teams) yield team.name;
    const prefix = `/${group}/${resource}/${namespace ?? ""}/`;
    for (const key of this.index.accessKeys()) if (key.startsWith(prefix)) yield key.slice(prefix.length);
    if (resource === "projects" && this.projects) yield* this.projects.index.names();
    yield* scopeStrings(principal).names;
  }

  private aboutProjects(request: AuthorizationAttributes): boolean {
    return (
      principalOf(request.user) !== undefined &&
      (request.resource === "virtualclusterinstances" ||
        request.resource === "spaceinstances" ||
        request.resource === "projects")
    );
  }

  private scopeCoversInstance(principal: Principal, request: AuthorizationAttributes, prefix: string): boolean {
    const scope = principal.scope;
    if (!scope) return true;
    return KUBECONFIG_KEY_VERBS.every((verb) => scope({ ...request, verb, subresource: undefined }, prefix));
  }
}

/** `get` on one object of `resource` (without one: on every object of it). */
const readRequest = (resource: string, object?: KubeObject) => ({
  verb: "get",
  resourceRequest: true,
  group: GROUP,
  resource,
  ...(object?.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
  ...(object ? { name: object.metadata.name ?? "" } : {}),
});

/** The object names and URL patterns an access key's scope lists. */
function scopeStrings(principal: Principal): { names: string[]; urls: string[] } {
  const scope = principal.key.scope;
  const names = [
    ...(scope?.projects ?? []).map((p) => p.project),
    ...(scope?.spaces ?? []).map((s) => s.space),
    ...(scope?.virtualClusters ?? []).map((v) => v.virtualCluster),
    ...(scope?.clusters ?? []).map((c) => c.cluster),
    ...(scope?.roles ?? []).flatMap((r) => [
      ...(r.projects ?? []),
      ...(r.virtualClusters ?? []),
      ...(r.clusters ?? []),
    ]),
    ...(scope?.rules ?? []).flatMap((r) => (r.resources ?? []).flatMap((entry) => entry.resourceNames ?? [])),
  ];
  const urls = (scope?.rules ?? []).flatMap((r) => r.nonResourceURLs ?? []);
  return {
    names: names.filter((name): name is string => typeof name === "string" && name !== "" && name !== "*"),
    urls,
  };
}
