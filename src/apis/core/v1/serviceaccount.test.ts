import { describeResourceConformance } from "../../../registry/conformance.ts";
import { type ServiceAccount, serviceAccountDefinition } from "./serviceaccount.ts";

describeResourceConformance({
  definition: serviceAccountDefinition,
  sample: (name) => ({
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name },
    automountServiceAccountToken: false,
  }),
  changeSpec: (object) => {
    (object as ServiceAccount).imagePullSecrets = [{ name: "registry" }];
  },
});
