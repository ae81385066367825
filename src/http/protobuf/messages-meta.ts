// meta/v1 messages (k8s.io/apimachinery pkg/apis/meta/v1/generated.proto): field numbers from upstream, JSON names
// and the `!` (keep zero) marks from the Go types' json tags. Notation: message-schema.ts.

import type { MessageTable } from "./message-schema.ts";

export const metaV1Messages: MessageTable = {
  package: "k8s.io.apimachinery.pkg.apis.meta.v1",
  messages: {
    ObjectMeta:
      "1 name, 2 generateName, 3 namespace, 4 selfLink, 5 uid, 6 resourceVersion, 7 generation int64, " +
      "8 creationTimestamp Time, 9 deletionTimestamp Time, 10 deletionGracePeriodSeconds! int64, " +
      "11 labels map<string>, 12 annotations map<string>, 13 ownerReferences []OwnerReference, " +
      "14 finalizers []string, 17 managedFields []ManagedFieldsEntry",
    ListMeta: "1 selfLink, 2 resourceVersion, 3 continue, 4 remainingItemCount! int64, 5 shardInfo ShardInfo",
    ShardInfo: "1 selector!",
    OwnerReference: "5 apiVersion!, 1 kind!, 3 name!, 4 uid!, 6 controller! bool, 7 blockOwnerDeletion! bool",
    ManagedFieldsEntry:
      "1 manager, 2 operation, 3 apiVersion, 4 time Time, 6 fieldsType, 7 fieldsV1 FieldsV1, 8 subresource",
    LabelSelector: "1 matchLabels map<string>, 2 matchExpressions []LabelSelectorRequirement",
    LabelSelectorRequirement: "1 key!, 2 operator!, 3 values []string",
    FieldSelectorRequirement: "1 key!, 2 operator!, 3 values []string",
    Condition: "1 type!, 2 status!, 3 observedGeneration int64, 4 lastTransitionTime Time, 5 reason!, 6 message!",
    DeleteOptions:
      "1 gracePeriodSeconds! int64, 2 preconditions Preconditions, 3 orphanDependents! bool, " +
      "4 propagationPolicy!, 5 dryRun []string, 6 ignoreStoreReadErrorWithClusterBreakingPotential! bool",
    Preconditions: "1 uid!, 2 resourceVersion!",
  },
};
