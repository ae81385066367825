// A kubeconfig for a virtual cluster through the platform (`virtualcluster connect`): find its instance (in one
// project, or in every project the login can see), then ask the instance's kubeconfig subresource for a new access key
// scoped to that virtual cluster, or a client certificate from the instance's CA.

import { LifecycleError } from "./lifecycle-error.ts";
import { API_GROUP_PATH, type PlatformClient } from "./platform-client.ts";
import {
  checkLogin,
  findInstances,
  GROUP_VERSION,
  getInstance,
  type InstanceObject,
  projectNamespace,
} from "./platform-registration.ts";
import { type RunStep, runQuietly } from "./run-step.ts";

export interface InstanceKubeconfigOptions {
  /** The virtual cluster's name as registered on the platform. */
  name: string;
  /** Its project; without one every project the login can see is searched. */
  project?: string;
  /** Its host namespace: picks among instances of that name in several projects. */
  namespace?: string;
  /** A client certificate instead of an access key. */
  clientCert?: boolean;
  /** A client of the platform the user is logged in to. */
  platform: PlatformClient;
  step?: RunStep;
  /** Told when the instance is offline; the kubeconfig is requested all the same. */
  onOffline?: (instance: InstanceObject) => void;
}

export interface InstanceKubeconfig {
  /** The kubeconfig document. */
  kubeConfig: string;
  project: string;
  /** The instance on the platform. */
  instance: { namespace: string; name: string };
}

export async function requestInstanceKubeconfig(options: InstanceKubeconfigOptions): Promise<InstanceKubeconfig> {
  const { name, platform: client } = options;
  const step = options.step ?? runQuietly;
  const self = await step(`Checking the login to ${client.login.host}`, () => checkLogin(client));
  const prefix = projectNamespace(self, "");
  const instance = await step(`Looking up virtual cluster ${name}`, () =>
    findInstance(client, name, prefix, options.project, options.namespace),
  );
  const { namespace } = instance.metadata;
  const project = namespace.slice(prefix.length);
  const ingress = instance.spec?.template?.accessPoint?.ingress;
  if (!ingress?.enabled || !ingress.host) {
    throw new LifecycleError(
      `virtual cluster ${name} in project ${project} has not connected to the platform yet, so its address is unknown (is it running? see \`virtualcluster list\`)`,
    );
  }
  if (instance.status?.online === false) options.onOffline?.(instance);
  const reply = await step("Requesting a kubeconfig", () =>
    client.request<{ status?: { kubeConfig?: string } }>(
      "POST",
      `${API_GROUP_PATH}/namespaces/${encodeURIComponent(namespace)}/virtualclusterinstances/${encodeURIComponent(name)}/kubeconfig`,
      {
        body: {
          apiVersion: GROUP_VERSION,
          kind: "VirtualClusterInstanceKubeConfig",
          spec: options.clientCert ? { clientCert: true } : {},
        },
      },
    ),
  );
  const kubeConfig = reply.status?.kubeConfig;
  if (!kubeConfig) throw new LifecycleError("the platform returned no kubeconfig");
  return { kubeConfig, project, instance: { namespace, name } };
}

async function findInstance(
  client: PlatformClient,
  name: string,
  prefix: string,
  project: string | undefined,
  hostNamespace: string | undefined,
): Promise<InstanceObject> {
  if (project !== undefined) {
    const instance = await getInstance(client, `${prefix}${project}`, name);
    if (!instance) throw new LifecycleError(`virtual cluster ${name} not found in project ${project}`);
    return instance;
  }
  const found = (await findInstances(client, name)).filter(
    (instance) => hostNamespace === undefined || instance.spec?.clusterRef?.namespace === hostNamespace,
  );
  if (found.length === 0) {
    const where = hostNamespace === undefined ? "" : ` in host namespace ${hostNamespace}`;
    throw new LifecycleError(`virtual cluster ${name} not found${where} on the platform ${client.login.host}`);
  }
  if (found.length > 1) {
    const projects = found.map((instance) => instance.metadata.namespace.slice(prefix.length)).sort();
    throw new LifecycleError(`virtual cluster ${name} exists in projects ${projects.join(", ")}: pass --project`);
  }
  return found[0];
}
