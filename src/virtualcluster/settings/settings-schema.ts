import { array, boolean, object, raw, type Schema, string } from "./schema.ts";

/** Secret the platform access key is read from by default. */
export const DEFAULT_API_KEY_SECRET = "virtualcluster-platform-api-key";

const patchItem: Schema = object({
  path: string(),
  expression: string(),
  reverseExpression: string(),
  reference: object(
    {
      apiVersion: string(),
      apiVersionPath: string(),
      kind: string(),
      kindPath: string(),
      namePath: string(),
      namespacePath: string(),
    },
    "optional",
  ),
  labels: object({}, "optional"),
});

const patchedResource = (enabled: boolean) => object({ enabled: boolean(enabled), patches: array(patchItem) });
/** ConfigMaps and Secrets: only the ones a reference patch names, or every one with `all: true`. */
const referencedResource = () => object({ enabled: boolean(true), all: boolean(false), patches: array(patchItem) });

/** Schema of virtualcluster.yaml. Add new sections here; the loader and `config defaults` pick them up. */
export const settingsSchema = object({
  sync: object({
    toHost: object({
      endpoints: patchedResource(true),
      services: patchedResource(true),
      // discovery.k8s.io/v1 slices a user (or a controller of theirs) writes; the mirrored ones are made on each side.
      endpointSlices: patchedResource(true),
      configMaps: referencedResource(),
      secrets: referencedResource(),
      namespaces: object({ enabled: boolean(false) }),
    }),
  }),
  controlPlane: object({
    apiServer: object({
      // OpenID Connect authentication of the API server, as kube-apiserver's --oidc-* flags.
      oidc: object(
        {
          issuerURL: string(),
          clientID: string(),
          usernameClaim: string({ default: "sub" }),
          usernamePrefix: string(),
          groupsClaim: string(),
          groupsPrefix: string(),
          caFile: string(),
        },
        "optional",
      ),
    }),
  }),
  external: object({
    platform: object(
      {
        apiKey: object(
          {
            secretName: string({ default: DEFAULT_API_KEY_SECRET }),
            namespace: string(),
            createRBAC: boolean(true),
          },
          "optional",
        ),
        project: string(),
      },
      "optional",
    ),
  }),
  experimental: object({
    multiNamespaceMode: object({ enabled: boolean(false) }),
  }),
  // The platform's audit block (enabled, level or policy, path, rotation), checked by audit-settings.ts.
  audit: raw(),
});

/** The patch lists the loader compiles, with the resource each one belongs to. */
export const PATCH_LISTS = [
  { resource: "endpoints", path: "sync.toHost.endpoints.patches" },
  { resource: "services", path: "sync.toHost.services.patches" },
  { resource: "endpointslices", path: "sync.toHost.endpointSlices.patches" },
  { resource: "configmaps", path: "sync.toHost.configMaps.patches" },
  { resource: "secrets", path: "sync.toHost.secrets.patches" },
] as const;

export type PatchedResource = (typeof PATCH_LISTS)[number]["resource"];
