// TypeScript shapes of the platform config (the schema in schema*.ts is the source of truth; these follow it).

export type AuditLevel = "None" | "Metadata" | "Request" | "RequestResponse";
export type AuditStage = "RequestReceived" | "ResponseStarted" | "ResponseComplete" | "Panic";

export interface AuditGroupResources {
  group?: string;
  resources?: string[];
  resourceNames?: string[];
}

export interface AuditPolicyRule {
  level: AuditLevel;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: AuditGroupResources[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  omitStages?: AuditStage[];
  requestTargets?: string[];
  clusters?: string[];
}

export interface AuditPolicy {
  rules?: AuditPolicyRule[];
  omitStages?: AuditStage[];
}

export interface AuditConfig {
  enabled?: boolean;
  disableAgentSyncBack?: boolean;
  level?: number;
  policy?: AuditPolicy;
  dataStoreEndpoint?: string;
  dataStoreTTL?: number;
  path?: string;
  maxAge?: number;
  maxBackups?: number;
  maxSize?: number;
  compress?: boolean;
}

export interface OidcProvider {
  issuerUrl?: string;
  clientId?: string;
  clientSecret?: string;
  redirectURI?: string;
  scopes?: string[];
  [field: string]: unknown;
}

export interface ProviderBlocks {
  oidc?: OidcProvider;
  codeHostA?: Record<string, unknown>;
  codeHostB?: Record<string, unknown>;
  idpA?: Record<string, unknown>;
  idpB?: Record<string, unknown>;
  saml?: Record<string, unknown>;
}

export interface AuthConfig extends ProviderBlocks {
  password?: { disabled?: boolean };
  connectors?: (ProviderBlocks & { id: string; displayName?: string })[];
  disableTeamCreation?: boolean;
  disableUserCreation?: boolean;
  accessKeyMaxTTLSeconds?: number;
  loginAccessKeyTTLSeconds?: number;
  customHttpHeaders?: Record<string, string>;
  groupsFilters?: string[];
}

export interface PlatformConfig {
  auth?: AuthConfig;
  oidc?: Record<string, unknown>;
  apps?: Record<string, unknown>;
  audit?: AuditConfig;
  platformHost?: string;
  projectNamespacePrefix?: string;
  workspaceSubDomain?: string;
  uiSettings?: Record<string, unknown>;
  secretStore?: Record<string, unknown> & { address?: string; syncInterval?: string };
  disableConfigEndpoint?: boolean;
  authenticateVersionEndpoint?: boolean;
  cloud?: Record<string, unknown>;
  costControl?: Record<string, unknown>;
}
