// Query parameters of each operation, with the apiserver's wording. kubectl decides whether the server validates
// fields by finding `fieldValidation` among a PATCH operation's own parameters.

export interface QueryParameter {
  name: string;
  type: "string" | "integer" | "boolean";
  description: string;
}

const q = (name: string, type: QueryParameter["type"], description: string): QueryParameter => ({
  name,
  type,
  description,
});

const RESOURCE_VERSIONS = "https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions";

const allowWatchBookmarks = q(
  "allowWatchBookmarks",
  "boolean",
  'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server\'s discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored.',
);
const continueToken = q(
  "continue",
  "string",
  "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token.\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications.",
);
const dryRun = q(
  "dryRun",
  "string",
  "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed",
);
const FIELD_MANAGER =
  "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.";
const fieldManager = q("fieldManager", "string", FIELD_MANAGER);
const patchFieldManager = q(
  "fieldManager",
  "string",
  `${FIELD_MANAGER} This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch).`,
);
const fieldSelector = q(
  "fieldSelector",
  "string",
  "A selector to restrict the list of returned objects by their fields. Defaults to everything.",
);
const fieldValidation = q(
  "fieldValidation",
  "string",
  "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.",
);
const force = q(
  "force",
  "boolean",
  'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.',
);
const gracePeriodSeconds = q(
  "gracePeriodSeconds",
  "integer",
  "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.",
);
const labelSelector = q(
  "labelSelector",
  "string",
  "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
);
const limit = q(
  "limit",
  "integer",
  "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. Setting a limit may return fewer than the requested amount of items (up to zero items) in the event all requested objects are filtered out and clients should only use the presence of the continue field to determine whether more results are available. If limit is specified and the continue field is empty, clients may assume that no more results are available. This field is not supported if watch is true.",
);
const orphanDependents = q(
  "orphanDependents",
  "boolean",
  'Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the "orphan" finalizer will be added to/removed from the object\'s finalizers list. Either this field or PropagationPolicy may be set, but not both.',
);
const propagationPolicy = q(
  "propagationPolicy",
  "string",
  "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.",
);
const resourceVersion = q(
  "resourceVersion",
  "string",
  `resourceVersion sets a constraint on what resource versions a request may be served from. See ${RESOURCE_VERSIONS} for details.\n\nDefaults to unset`,
);
const resourceVersionMatch = q(
  "resourceVersionMatch",
  "string",
  `resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See ${RESOURCE_VERSIONS} for details.\n\nDefaults to unset`,
);
const sendInitialEvents = q(
  "sendInitialEvents",
  "boolean",
  '`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic "Bookmark" event  will be sent. The bookmark will report the ResourceVersion (RV) corresponding to the set of objects, and be marked with `"k8s.io/initial-events-end": "true"` annotation. Afterwards, the watch stream will proceed as usual, sending watch events corresponding to changes (subsequent to the RV) to objects watched.\n\nWhen `sendInitialEvents` option is set, we require `resourceVersionMatch` option to also be set.',
);
const timeoutSeconds = q(
  "timeoutSeconds",
  "integer",
  "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.",
);
const watch = q(
  "watch",
  "boolean",
  "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.",
);

export const PRETTY_PARAMETER = q("pretty", "string", "If 'true', then the output is pretty printed.");

/** Query parameters by x-kubernetes-action, sorted by name as kube-openapi emits them. */
export const QUERY_PARAMETERS: Record<string, QueryParameter[]> = {
  get: [],
  list: [
    allowWatchBookmarks,
    continueToken,
    fieldSelector,
    labelSelector,
    limit,
    resourceVersion,
    resourceVersionMatch,
    sendInitialEvents,
    timeoutSeconds,
    watch,
  ],
  post: [dryRun, fieldManager, fieldValidation],
  put: [dryRun, fieldManager, fieldValidation],
  patch: [dryRun, patchFieldManager, fieldValidation, force],
  delete: [dryRun, gracePeriodSeconds, orphanDependents, propagationPolicy],
  deletecollection: [
    continueToken,
    dryRun,
    fieldSelector,
    gracePeriodSeconds,
    labelSelector,
    limit,
    orphanDependents,
    propagationPolicy,
    resourceVersion,
    resourceVersionMatch,
    sendInitialEvents,
    timeoutSeconds,
  ],
};
