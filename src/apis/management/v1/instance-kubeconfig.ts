// `virtualclusterinstances/<name>/kubeconfig` (POST, 201, kind VirtualClusterInstanceKubeConfig): a complete kubeconfig
// for one virtual cluster in status.kubeConfig. Rules decided here, credentials made by the platform's issuer:
//  - only for an instance with an ingress access point (spec.template.accessPoint.ingress enabled with a host); the
//    kubeconfig points to https://<host>, or to spec.server, which overrides the address but is no ingress itself;
//  - certificateTTL omitted: one day; 0: the signing default of one year; negative: 422; bounded by the platform's
//    maximum access key lifetime (a warning says so). The same lifetime applies to the token form's access key.
// The response is the only place the credentials appear (the audit policy keeps this request's bodies out of logs).

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { compileObjectSchema } from "../../../apimachinery/schema.ts";
import { boolean, integer, object, type Static, string } from "../../../apimachinery/schema-builders.ts";
import { isPlainObject, type KubeObject } from "../../../apimachinery/types.ts";
import type { ActionHandler, RequestContext } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";
import { projectOfNamespace } from "./project.ts";
import type { VirtualClusterInstance } from "./virtualclusterinstance-schema.ts";

export const KUBECONFIG_KIND = "VirtualClusterInstanceKubeConfig";
export const DEFAULT_CERTIFICATE_TTL_SECONDS = 24 * 60 * 60;
/** certificateTTL 0: no explicit duration, so the signer's default applies, as a cluster signer's would. */
export const SIGNING_DEFAULT_TTL_SECONDS = 365 * 24 * 60 * 60;
/** Longer lifetimes are refused: certificates past this are no longer credentials anyone can keep track of. */
export const MAX_CERTIFICATE_TTL_SECONDS = 10 * SIGNING_DEFAULT_TTL_SECONDS;

export interface KubeconfigRequest {
  context: RequestContext;
  instance: VirtualClusterInstance;
  project: string;
  /** The address written into the kubeconfig. */
  server: string;
  ttlSeconds: number;
  clientCert: boolean;
}

export interface KubeconfigIssuer {
  /** Makes the credentials and the kubeconfig document; `accessKey` is the object name of a new key (token form). */
  issue(request: KubeconfigRequest): Promise<{ kubeConfig: string; accessKey?: string }>;
  /** The platform's maximum credential lifetime in seconds (0: none), read at every request. */
  maxTTLSeconds(): number;
  namespacePrefix(): string;
}

const schema = {
  spec: object(
    {
      certificateTTL: integer(
        "Seconds the credentials in the kubeconfig stay valid. Omitted: one day; 0: the signing default of one year.",
      ),
      server: string("Overrides the server address written into the kubeconfig (an https URL)."),
      clientCert: boolean(
        "When true the kubeconfig carries a client certificate signed by the instance's client CA instead of a platform access key.",
      ),
    },
    "What kubeconfig to make.",
  ),
  status: object(
    {
      kubeConfig: string("The kubeconfig document (YAML)."),
      accessKey: string("Object name of the access key created for the kubeconfig (token form); delete it to revoke."),
    },
    "The result.",
  ),
};
/** What a client asks for. */
type KubeconfigSpec = Static<typeof schema.spec>;
const compiled = compileObjectSchema(schema);
const KIND = { group: GROUP, kind: KUBECONFIG_KIND };

/** The lifetime asked for, or the field errors of the request. */
export function certificateLifetime(ttl: number | undefined): number | FieldError {
  if (ttl === undefined) return DEFAULT_CERTIFICATE_TTL_SECONDS;
  if (ttl < 0) {
    return fieldError.invalid(
      "spec.certificateTTL",
      ttl,
      "must be 0 (the signing default of one year) or a positive number of seconds",
    );
  }
  if (ttl > MAX_CERTIFICATE_TTL_SECONDS) {
    return fieldError.invalid("spec.certificateTTL", ttl, `must be at most ${MAX_CERTIFICATE_TTL_SECONDS} (10 years)`);
  }
  return ttl === 0 ? SIGNING_DEFAULT_TTL_SECONDS : ttl;
}

function serverErrors(server: string): FieldError[] {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return [fieldError.invalid("spec.server", server, "must be an absolute https URL, e.g. https://vc1.example.com")];
  }
  if (url.protocol !== "https:") return [fieldError.invalid("spec.server", server, "must use https")];
  if (url.username || url.password) {
    return [fieldError.invalid("spec.server", server, "must not contain credentials")];
  }
  return [];
}

/** The request's spec: validated against the schema (unknown fields dropped with a warning). */
function decodeSpec(body: KubeObject | undefined, name: string, context: RequestContext): KubeconfigSpec {
  if (body === undefined) return {};
  const apiVersion = `${GROUP}/${VERSION}`;
  if (body.apiVersion !== undefined && body.apiVersion !== apiVersion) {
    throw errors.badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersion})`,
    );
  }
  if (body.kind !== undefined && body.kind !== KUBECONFIG_KIND) {
    throw errors.badRequest(
      `the kind in the data (${String(body.kind)}) does not match the expected kind (${KUBECONFIG_KIND})`,
    );
  }
  const object: KubeObject = {
    ...body,
    apiVersion,
    kind: KUBECONFIG_KIND,
    metadata: isPlainObject(body.metadata) ? body.metadata : {},
  };
  delete object.status;
  for (const path of compiled.prune(object)) context.warnings.push(`unknown field "${path}"`);
  const errs = compiled.validate(object);
  if (errs.length) throw errors.invalid(KIND, name, errs);
  return (object.spec as KubeconfigSpec | undefined) ?? {};
}

export function instanceKubeconfigSubresource(issuer: KubeconfigIssuer): ActionHandler {
  return {
    kind: KUBECONFIG_KIND,
    description:
      "VirtualClusterInstanceKubeConfig returns a kubeconfig for a virtual cluster instance with an ingress access point.",
    schema,
    verbs: ["create"],
    async handle({ context, body, parent }) {
      const instance = parent as VirtualClusterInstance;
      const { name = "", namespace = "" } = instance.metadata;
      const spec = decodeSpec(body, name, context);
      const errs: FieldError[] = [];
      const lifetime = certificateLifetime(spec.certificateTTL);
      if (typeof lifetime !== "number") errs.push(lifetime);
      if (spec.server !== undefined) errs.push(...serverErrors(spec.server));
      if (errs.length || typeof lifetime !== "number") throw errors.invalid(KIND, name, errs);

      const project = projectOfNamespace(issuer.namespacePrefix(), namespace) ?? "";
      const ingress = instance.spec?.template?.accessPoint?.ingress;
      if (!ingress?.enabled || !ingress.host) {
        throw errors.badRequest(
          `virtual cluster instance "${name}" in project "${project}" has no ingress access point, so it serves no kubeconfig: set spec.template.accessPoint.ingress.enabled to true and spec.template.accessPoint.ingress.host on the instance (spec.server only changes the address written)`,
        );
      }
      let ttlSeconds = lifetime;
      const max = issuer.maxTTLSeconds();
      if (max > 0 && ttlSeconds > max) {
        ttlSeconds = max;
        context.warnings.push(
          `the kubeconfig's credentials are valid for ${max} seconds, the platform's maximum access key lifetime`,
        );
      }
      const result = await issuer.issue({
        context,
        instance,
        project,
        server: spec.server ?? `https://${ingress.host}`,
        ttlSeconds,
        clientCert: spec.clientCert === true,
      });
      const status: Record<string, string> = { kubeConfig: result.kubeConfig };
      if (result.accessKey) status.accessKey = result.accessKey;
      const response: KubeObject = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: KUBECONFIG_KIND,
        metadata: { name, namespace },
        spec: { ...spec },
        status,
      };
      return response;
    },
  };
}
