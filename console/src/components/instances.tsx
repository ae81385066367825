// Shared by the overview and the project pages: where a project and a virtual cluster live in the console, and an
// instance's online state as a label.

import { Label } from "@patternfly/react-core";
import type { Instance } from "../lib/kube.ts";

export const projectPath = (project: string) => `/projects/${encodeURIComponent(project)}`;
export const instancePath = (project: string, instance: string) =>
  `${projectPath(project)}/virtualclusters/${encodeURIComponent(instance)}`;

export function InstanceOnline({ instance }: { instance: Instance }) {
  return instance.status?.online ? <Label color="green">Online</Label> : <Label color="grey">Offline</Label>;
}
