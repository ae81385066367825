// The project `default`, created on the first start of a data directory: where instances go when no project is
// named (the CLI and the virtual cluster runtime default to it). A marker records that it was made, so a restart
// neither fails nor brings back a default project an admin deleted on purpose.

import { isStatusError } from "../../apimachinery/errors.ts";
import { GROUP, VERSION } from "../../apis/management/v1/common.ts";
import type { Registry } from "../../registry/registry.ts";
import { systemContext } from "../../registry/system-context.ts";
import { StorageError } from "../../storage/types.ts";

export const DEFAULT_PROJECT = "default";
const MARKER = "/internal/bootstrap/default-project";
const MANAGER = "virtualcluster-bootstrap";

export async function ensureDefaultProject(registry: Registry): Promise<void> {
  const storage = registry.storage;
  if (await storage.get(MARKER)) return;
  const projects = registry.genericStore(GROUP, "projects");
  if (!projects) throw new Error("the projects resource is not registered");
  await projects
    .create(
      systemContext("system:bootstrap", MANAGER),
      undefined,
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: "Project",
        metadata: { name: DEFAULT_PROJECT },
        spec: {
          displayName: "Default Project",
          description: "Created on the platform's first start; instances go here when no project is named.",
        },
      },
      { fieldManager: MANAGER },
    )
    .catch((error) => {
      if (!(isStatusError(error) && error.reason === "AlreadyExists")) throw error;
    });
  await storage.create(MARKER, JSON.stringify({ created: new Date().toISOString() })).catch((error) => {
    if (!(error instanceof StorageError && error.storageCode === "KeyExists")) throw error;
  });
}
