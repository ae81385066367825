import { describeResourceConformance } from "../../../registry/conformance.ts";
import { userDefinition } from "./user.ts";

describeResourceConformance({
  definition: userDefinition,
  sample: (name) => ({
    apiVersion: "management.platform.sh/v1",
    kind: "User",
    metadata: { name },
    spec: { displayName: "Sample", email: "sample@example.com", clusterRoles: [{ name: "viewer" }] },
  }),
  changeSpec: (object) => {
    (object.spec as { email: string }).email = "changed@example.com";
  },
});
