// Finds the platform access key of a virtual cluster, in the specification's order:
//   1. the environment variable LICENSE (the key only; the connection details still come from a Secret or from
//      PLATFORM_HOST / PLATFORM_INSECURE / PLATFORM_CA_DATA),
//   2. the Secret named by external.platform.apiKey.secretName in apiKey.namespace (default: our own namespace),
//   3. the Secret `virtualcluster-platform-api-key` in our own namespace.
// Dedicated mode (`external.platform: {}`) skips step 2: the command-line client wrote the default Secret.

import { DEFAULT_API_KEY_SECRET } from "../settings/settings-schema.ts";
import type { PlatformSettings } from "../settings/types.ts";

export interface PlatformCredentials {
  accessKey: string;
  /** Platform address without scheme, e.g. `platform.example.com` or `127.0.0.1:8443`. */
  host: string;
  project: string;
  insecure: boolean;
  /** PEM of the platform's CA, when the Secret carries one. */
  certificateAuthorityPem?: string;
  /** Name to register the instance under (default: the virtual cluster's name). */
  name?: string;
  /** Where the key came from, for logs and errors (never the key itself). */
  source: string;
}

/** A Secret as the lookup reads it: only its data. */
export interface SecretData {
  data?: Record<string, string>;
}

/** Reads one Secret of the host cluster; a missing one fails with code 404, a refused read with 403. */
export interface SecretReader {
  readNamespacedSecret(place: { name: string; namespace: string }): Promise<SecretData>;
}

export interface ApiKeyLookupOptions {
  core: SecretReader;
  platform: PlatformSettings;
  /** The virtual cluster's host namespace. */
  namespace: string;
  env?: NodeJS.ProcessEnv;
}

/** No key anywhere, or a Secret without the keys it needs. The message lists every place looked at. */
export class ApiKeyNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ApiKeyNotFoundError";
  }
}

/** The host refuses this virtual cluster's identity the Secret (403): its RBAC is missing. */
export class SecretForbiddenError extends Error {
  readonly place: { name: string; namespace: string };
  constructor(place: { name: string; namespace: string }) {
    super(`the host cluster denies reading Secret ${place.namespace}/${place.name} (403)`);
    this.name = "SecretForbiddenError";
    this.place = place;
  }
}

interface SecretPlace {
  name: string;
  namespace: string;
}

function places(options: ApiKeyLookupOptions): SecretPlace[] {
  const own = { name: DEFAULT_API_KEY_SECRET, namespace: options.namespace };
  const apiKey = options.platform.apiKey;
  if (!apiKey) return [own];
  const configured = { name: apiKey.secretName, namespace: apiKey.namespace || options.namespace };
  const same = configured.name === own.name && configured.namespace === own.namespace;
  return same ? [configured] : [configured, own];
}

const decode = (secret: SecretData, key: string): string | undefined => {
  const encoded = secret.data?.[key];
  return encoded === undefined ? undefined : Buffer.from(encoded, "base64").toString("utf8").trim();
};

async function readSecret(options: ApiKeyLookupOptions, place: SecretPlace): Promise<SecretData | undefined> {
  try {
    return await options.core.readNamespacedSecret(place);
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    if ((error as { code?: number }).code === 403) throw new SecretForbiddenError(place);
    throw error;
  }
}

export async function lookupApiKey(options: ApiKeyLookupOptions): Promise<PlatformCredentials> {
  const env = options.env ?? process.env;
  const fromEnv = env.LICENSE?.trim();
  const looked: string[] = fromEnv ? [] : ["environment variable LICENSE (unset)"];
  for (const place of places(options)) {
    const where = `Secret ${place.namespace}/${place.name}`;
    const secret = await readSecret(options, place);
    if (!secret) {
      looked.push(`${where} (not found)`);
      continue;
    }
    const accessKey = fromEnv || decode(secret, "accessKey");
    const host = env.PLATFORM_HOST?.trim() || decode(secret, "host");
    if (!accessKey || !host) {
      looked.push(`${where} (missing ${!accessKey ? "accessKey" : "host"})`);
      continue;
    }
    return credentials({
      accessKey,
      host,
      project: decode(secret, "project"),
      insecure: decode(secret, "insecure"),
      certificateAuthorityData: decode(secret, "certificateAuthorityData"),
      name: decode(secret, "name"),
      source: fromEnv ? `environment variable LICENSE (connection details from ${where})` : where,
    });
  }
  if (fromEnv && env.PLATFORM_HOST?.trim()) {
    return credentials({
      accessKey: fromEnv,
      host: env.PLATFORM_HOST.trim(),
      project: env.PLATFORM_PROJECT,
      insecure: env.PLATFORM_INSECURE,
      certificateAuthorityData: env.PLATFORM_CA_DATA,
      source: "environment variable LICENSE",
    });
  }
  if (fromEnv) looked.unshift("environment variable LICENSE (set, but no Secret or PLATFORM_HOST gives the host)");
  throw new ApiKeyNotFoundError(`no platform access key found; looked at: ${looked.join("; ")}`);
}

function credentials(raw: {
  accessKey: string;
  host: string;
  project?: string;
  insecure?: string;
  certificateAuthorityData?: string;
  name?: string;
  source: string;
}): PlatformCredentials {
  const caData = raw.certificateAuthorityData?.trim();
  return {
    accessKey: raw.accessKey,
    host: raw.host.replace(/^https?:\/\//, "").replace(/\/+$/, ""),
    project: raw.project?.trim() || "default",
    insecure: raw.insecure?.trim() === "true",
    // Accepted as PEM or as base64 of the PEM (kubeconfig's certificate-authority-data style).
    certificateAuthorityPem: caData
      ? caData.startsWith("-----")
        ? caData
        : Buffer.from(caData, "base64").toString("utf8")
      : undefined,
    name: raw.name?.trim() || undefined,
    source: raw.source,
  };
}
