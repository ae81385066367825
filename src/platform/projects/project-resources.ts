// Projects and virtual cluster instances, wired: their definitions (with the kubeconfig subresource and the instance
// client CAs), the project index that lets members use their projects, the project controller and the default
// project. `definitions` are registered with the rest; `start` runs once the registry is complete (projects-module.ts).

import type { Logger } from "pino";
import { isStatusError } from "../../apimachinery/errors.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import { createHelmReleaseDefinition } from "../../apis/management/v1/helmrelease.ts";
import { instanceKubeconfigSubresource } from "../../apis/management/v1/instance-kubeconfig.ts";
import { createProjectDefinition } from "../../apis/management/v1/project.ts";
import type { ClusterLookup } from "../../apis/management/v1/project-placement.ts";
import type { Project } from "../../apis/management/v1/project-schema.ts";
import { createProjectSecretDefinition } from "../../apis/management/v1/projectsecret.ts";
import { createVirtualClusterInstanceDefinition } from "../../apis/management/v1/virtualclusterinstance.ts";
import { StoreInformer } from "../../auth/store-informer.ts";
import type { LiveSettings } from "../../config/settings.ts";
import { keyCaller } from "../../identity/key-caller.ts";
import { PlatformAuthorizer } from "../../identity/platform-authorizer.ts";
import { ProjectIndex } from "../../identity/project-index.ts";
import { instanceCaller } from "../../identity/runtime-binding.ts";
import { resourcePrefix } from "../../registry/keys.ts";
import type { Registry } from "../../registry/registry.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import type { Authorizer, ResourceDefinition } from "../../registry/types.ts";
import type { KeyValueStore } from "../../storage/types.ts";
import { ensureDefaultProject } from "./default-project.ts";
import { helmInstallProblem } from "./helm-install-check.ts";
import { InstanceCertificateAuthorities } from "./instance-cas.ts";
import { createKubeconfigIssuer } from "./kubeconfig-issuer.ts";
import { ProjectController } from "./project-controller.ts";

export interface ProjectResourcesOptions {
  storage: KeyValueStore;
  /** Filled with every kind before start(); read when requests are served. */
  registry: Registry;
  settings: LiveSettings;
  /** Connected clusters, which instances placed on one are checked against. */
  clusters?: ClusterLookup;
  logger?: Logger;
}

/** Projects and instances, for the resource list (src/platform/management-resources.ts). */
export interface ProjectDefinitions {
  projects: ResourceDefinition;
  instances: ResourceDefinition;
  /** ProjectSecrets (kept in the secret store by src/platform/config-systems/secret-store.ts). */
  secrets: ResourceDefinition;
  /** HelmReleases (installed by the clusters' agents, src/platform/clusters/cluster-apps.ts). */
  apps: ResourceDefinition;
}

export interface ProjectResources {
  definitions: ProjectDefinitions;
  /** Creates the default project (first start) and gives `authorizer` the project index. */
  start(authorizer: Authorizer): Promise<void>;
  /** A new project controller, run by the leader replica only (src/platform/leader.ts). */
  controller(): { name: string; start(): Promise<void>; stop(): void };
  close(): void;
}

export function createProjectResources(options: ProjectResourcesOptions): ProjectResources {
  const { storage, settings, registry, logger } = options;
  const store = (plural: string): GenericStore => {
    const found = registry.genericStore(GROUP, plural);
    if (!found) throw new Error(`${plural} is not registered`);
    return found;
  };
  const namespacePrefix = () => settings.current().projectNamespacePrefix;
  const cas = new InstanceCertificateAuthorities(storage, () => store("virtualclusterinstances"));

  const projectNamed = async (name: string) => {
    try {
      return (await store("projects").get(systemContext("system:projects", "virtualcluster-platform"), {
        name,
      })) as Project;
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") return undefined;
      throw error;
    }
  };
  const instance = createVirtualClusterInstanceDefinition({
    namespacePrefix,
    project: projectNamed,
    authority: cas,
    callers: instanceCaller,
    clusters: options.clusters,
    callerOwner: (context) => keyCaller.owner(context),
    kubeconfig: instanceKubeconfigSubresource(
      createKubeconfigIssuer({ cas, keys: () => store("ownedaccesskeys"), settings }),
    ),
  });
  const project = createProjectDefinition({
    namespacePrefix,
    // Spaces hold a project too: each is a namespace on a cluster that must go before the project does.
    instances: {
      count: async (namespace) =>
        (await storage.count(resourcePrefix(instance, namespace))) +
        (await storage.count(`/${GROUP}/spaceinstances/${namespace}/`)),
    },
  });

  const index = new ProjectIndex();
  const informer = new StoreInformer(storage, index, (error) =>
    logger?.error({ err: String(error) }, "project index update failed"),
  );
  let controller: ProjectController | undefined;

  return {
    definitions: {
      projects: project,
      instances: instance,
      secrets: createProjectSecretDefinition({ namespacePrefix, project: projectNamed }),
      apps: createHelmReleaseDefinition({
        namespacePrefix,
        project: projectNamed,
        installProblem: (release) => helmInstallProblem(store, release),
        uninstallFinalizer: true,
      }),
    },
    async start(authorizer) {
      await informer.start();
      if (authorizer instanceof PlatformAuthorizer) authorizer.useProjects(index, () => informer.fresh());
      await ensureDefaultProject(registry);
    },
    controller() {
      const current = new ProjectController({ registry, settings, cas, logger });
      controller = current;
      return { name: "project controller", start: () => current.start(), stop: () => current.stop() };
    },
    close() {
      controller?.stop();
      informer.stop();
    },
  };
}
