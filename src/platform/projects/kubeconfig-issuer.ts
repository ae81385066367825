// Credentials and documents for instance kubeconfigs (the rules are in apis/.../instance-kubeconfig.ts):
//  - token form: a new OwnedAccessKey of the caller, created through the ownedaccesskeys store with the caller's own
//    request context (so ownership, limits and the issuer stamp apply as to any key the caller creates), scoped to
//    this one virtual cluster, labelled with the instance's uid and revoked when the instance is deleted;
//  - clientCert: a fresh key pair and a client certificate from the instance's client CA, CN = the caller's name and
//    O = its groups (platform-internal "system:" groups never), user entry named `virtualcluster`.
// Cluster, context (and the token form's user) are named virtualcluster_<instance>_<project>.

import { GROUP, VERSION } from "../../apis/management/v1/common.ts";
import type { KubeconfigIssuer, KubeconfigRequest } from "../../apis/management/v1/instance-kubeconfig.ts";
import type { LiveSettings } from "../../config/settings.ts";
import { issueCertificate } from "../../pki/certificate-authority.ts";
import { buildKubeconfig } from "../../pki/kubeconfig.ts";
import type { GenericStore } from "../../registry/store.ts";
import type { InstanceCertificateAuthorities } from "./instance-cas.ts";

/** On the access keys of token-form kubeconfigs: the uid of their instance (deleting it revokes them). */
export const KUBECONFIG_INSTANCE_LABEL = "management.platform.sh/virtualclusterinstance-uid";
export const KUBECONFIG_INSTANCE_ANNOTATION = "management.platform.sh/virtualclusterinstance";
export const CLIENT_CERT_USER = "virtualcluster";
const MANAGER = "virtualclusterinstances-kubeconfig";
/** Keeps generated key names within the name length limit whatever the instance's name. */
const NAME_PART_MAX = 40;

export interface KubeconfigIssuerOptions {
  cas: InstanceCertificateAuthorities;
  /** The ownedaccesskeys store itself (not the caller-filtered view). */
  keys: () => GenericStore;
  settings: LiveSettings;
}

export function createKubeconfigIssuer(options: KubeconfigIssuerOptions): KubeconfigIssuer {
  const { cas, keys, settings } = options;

  const clientCertificate = async (request: KubeconfigRequest) => {
    const { context, instance, ttlSeconds } = request;
    const ca = await cas.signer(instance);
    const issued = await issueCertificate({
      ca,
      commonName: context.user.name,
      organizations: context.user.groups.filter((group) => !group.startsWith("system:")),
      usage: "client",
      validitySeconds: ttlSeconds,
    });
    return { clientCertificatePem: issued.certPem, clientKeyPem: issued.keyPem ?? "" };
  };

  const accessKey = async (request: KubeconfigRequest) => {
    const { context, instance, project, ttlSeconds } = request;
    const { name = "", namespace = "", uid = "" } = instance.metadata;
    const created = await keys().create(
      context,
      undefined,
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: "OwnedAccessKey",
        metadata: {
          generateName: `kubeconfig-${name.slice(0, NAME_PART_MAX).replace(/[-.]+$/, "")}-`,
          labels: { [KUBECONFIG_INSTANCE_LABEL]: uid },
          annotations: { [KUBECONFIG_INSTANCE_ANNOTATION]: `${namespace}/${name}` },
        },
        spec: {
          type: "User",
          displayName: `Kubeconfig of virtual cluster ${name} (project ${project})`,
          description: `Issued for a kubeconfig of the virtual cluster instance ${namespace}/${name}; delete it to revoke that kubeconfig.`,
          ttl: ttlSeconds,
          scope: { virtualClusters: [{ project, virtualCluster: name }] },
        },
      },
      { fieldManager: MANAGER },
    );
    return { token: (created.spec as { key: string }).key, name: created.metadata.name ?? "" };
  };

  return {
    maxTTLSeconds: () => settings.current().auth.accessKeyMaxTTLSeconds,
    namespacePrefix: () => settings.current().projectNamespacePrefix,
    async issue(request) {
      const { instance, project, server } = request;
      const name = `virtualcluster_${instance.metadata.name}_${project}`;
      const certificateAuthorityPem = instance.status?.serverCertificateAuthority || undefined;
      if (request.clientCert) {
        const user = await clientCertificate(request);
        return {
          kubeConfig: buildKubeconfig({ name, server, certificateAuthorityPem, user, userName: CLIENT_CERT_USER }),
        };
      }
      const key = await accessKey(request);
      return {
        kubeConfig: buildKubeconfig({ name, server, certificateAuthorityPem, user: { token: key.token } }),
        accessKey: key.name,
      };
    },
  };
}
