// The shapes the console reads (only the fields it shows or writes).

export interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  generateName?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: Meta;
}

export interface KubeList<T> {
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface User extends KubeObject {
  spec?: {
    username?: string;
    displayName?: string;
    description?: string;
    icon?: string;
    email?: string;
    verifiedEmail?: string;
    disabled?: boolean;
    clusterRoles?: { name: string }[];
    subject?: string;
  };
}

export interface Team extends KubeObject {
  spec?: { displayName?: string; description?: string; users?: string[]; groups?: string[] };
}

export interface AccessKeyScope {
  roles?: { role?: string; projects?: string[]; virtualClusters?: string[] }[];
  projects?: { project?: string }[];
  virtualClusters?: { project?: string; virtualCluster?: string }[];
  clusters?: { cluster?: string }[];
  [other: string]: unknown;
}

export interface AccessKey extends KubeObject {
  spec?: {
    displayName?: string;
    type?: string;
    user?: string;
    team?: string;
    key?: string;
    ttl?: number;
    disabled?: boolean;
    scope?: AccessKeyScope;
  };
  status?: { lastActivity?: string; expirationTimestamp?: string };
}

export interface Project extends KubeObject {
  spec?: {
    displayName?: string;
    description?: string;
    owner?: { user?: string; team?: string };
    members?: { kind?: string; name: string; clusterRole?: string }[];
  };
  status?: { phase?: string };
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface Instance extends KubeObject {
  spec?: {
    displayName?: string;
    description?: string;
    owner?: { user?: string; team?: string };
    clusterRef?: { cluster?: string; namespace?: string; virtualCluster?: string };
  };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    online?: boolean;
    lastHeartbeatTime?: string;
    kubernetesVersion?: string;
    conditions?: Condition[];
  };
}

export interface Self {
  status?: {
    user?: { name: string; username?: string; displayName?: string; email?: string; teams: { name: string }[] };
    team?: { name: string };
    accessKey?: string;
    accessKeyType?: string;
    accessKeyExpirationTimestamp?: string;
    platformHost?: string;
    projectNamespacePrefix?: string;
  };
}
