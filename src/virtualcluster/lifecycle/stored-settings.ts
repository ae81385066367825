// The settings Secret `vc-config-<name>` that `create` keeps in the host namespace: the settings as applied
// (key config.yaml) and, in annotations, what was registered on the platform (object names only, no key), so
// `delete` can clean up even from another machine.

import type { PlatformRegistration } from "./local-clusters.ts";

export const SETTINGS_KEY = "config.yaml";
const PREFIX = "virtualcluster.platform.sh/platform-";

export function settingsSecretName(name: string): string {
  return `vc-config-${name}`;
}

export function registrationAnnotations(registration: PlatformRegistration | undefined): Record<string, string> {
  if (!registration) return {};
  const annotations: Record<string, string> = {
    [`${PREFIX}url`]: registration.platform,
    [`${PREFIX}project`]: registration.project,
    [`${PREFIX}instance`]: `${registration.instance.namespace}/${registration.instance.name}`,
    [`${PREFIX}instance-created`]: String(registration.createdInstance),
  };
  if (registration.accessKey) annotations[`${PREFIX}access-key`] = registration.accessKey;
  return annotations;
}

/** The registration recorded on a settings Secret, if any. */
export function registrationFromAnnotations(
  annotations: Record<string, string> | undefined,
): PlatformRegistration | undefined {
  const platform = annotations?.[`${PREFIX}url`];
  const instance = annotations?.[`${PREFIX}instance`]?.split("/");
  if (!platform || instance?.length !== 2) return undefined;
  return {
    platform,
    project: annotations?.[`${PREFIX}project`] ?? "",
    instance: { namespace: instance[0], name: instance[1] },
    createdInstance: annotations?.[`${PREFIX}instance-created`] === "true",
    accessKey: annotations?.[`${PREFIX}access-key`] || undefined,
  };
}
