// What the audit benchmarks feed the audit code: the caller of the bench's admin key and a user as the registry
// encodes it (the bench user of api.ts, with the fields the store adds).

/** The admin caller as the access-key authenticator makes it. */
export const BENCH_CALLER = {
  name: "admin",
  uid: "6ac0b5dd-df4b-4288-b4fd-f4c884571aa9",
  groups: ["system:authenticated"],
  extra: {
    "management.platform.sh/access-key": ["admin-bootstrap"],
    "management.platform.sh/access-key-type": ["User"],
  },
};

/** A user's compact JSON as a GET or a create answers it. */
export function encodedUser(name: string, resourceVersion: string): string {
  return JSON.stringify({
    apiVersion: "management.platform.sh/v1",
    kind: "User",
    metadata: {
      resourceVersion,
      name,
      labels: { "bench.platform.sh/kind": "load" },
      uid: "f02f5149-8909-4e92-9be7-e802231e3b11",
      creationTimestamp: "2026-11-25T21:18:36Z",
      generation: 1,
      managedFields: [
        {
          manager: "unknown",
          operation: "Update",
          apiVersion: "management.platform.sh/v1",
          time: "2026-11-25T21:18:36Z",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:bench.platform.sh/kind": {} } }, "f:spec": {} },
        },
      ],
    },
    spec: {
      displayName: "Bench User",
      username: name,
      email: "bench.user@example.com",
      groups: ["developers", "operators"],
      subject: name,
    },
  });
}
