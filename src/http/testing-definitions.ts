// Resource definitions shaped like the platform's, for the discovery, OpenAPI and table tests.

import type { KubeObject } from "../apimachinery/types.ts";
import type { ActionHandler, ResourceDefinition } from "../registry/types.ts";

const GROUP = "management.platform.sh";

const echo: ActionHandler["handle"] = async ({ body }) => body as KubeObject;

export const usersDefinition: ResourceDefinition = {
  group: GROUP,
  version: "v1",
  kind: "User",
  plural: "users",
  singular: "user",
  shortNames: ["usr"],
  categories: ["platform"],
  namespaced: false,
  description: "User is a person or system that can access the platform.",
  schema: {
    spec: {
      type: "object",
      description: "The desired state of the user.",
      properties: {
        email: { type: "string", description: "The user's e-mail address." },
        access: {
          type: "array",
          description: "Access rules for the user itself.",
          items: {
            type: "object",
            description: "An access rule.",
            properties: { verbs: { type: "array", items: { type: "string" }, description: "Allowed verbs." } },
            required: ["verbs"],
          },
        },
      },
    },
    status: { type: "object", description: "The observed state.", "x-kubernetes-preserve-unknown-fields": true },
  },
  strategy: {},
  columns: [
    {
      name: "Email",
      type: "string",
      description: "The user's e-mail address.",
      cell: (u) => (u.spec as { email?: string } | undefined)?.email,
    },
    {
      name: "Groups",
      type: "string",
      priority: 1,
      description: "Groups.",
      cell: (u) => (u.spec as { groups?: string[] } | undefined)?.groups,
    },
  ],
};

export const instancesDefinition: ResourceDefinition = {
  group: GROUP,
  version: "v1",
  kind: "VirtualClusterInstance",
  plural: "virtualclusterinstances",
  singular: "virtualclusterinstance",
  namespaced: true,
  description: "VirtualClusterInstance is a virtual cluster in a project.",
  schema: {
    spec: { type: "object", description: "Desired state." },
    status: { type: "object", description: "State." },
  },
  strategy: {},
  statusSubresource: true,
  subresources: {
    kubeconfig: {
      kind: "VirtualClusterInstanceKubeConfig",
      description: "A kubeconfig for the virtual cluster.",
      schema: { spec: { type: "object", description: "Request." }, status: { type: "object", description: "Result." } },
      verbs: ["create"],
      handle: echo,
    },
  },
};

export const selvesDefinition: ResourceDefinition = {
  group: GROUP,
  version: "v1",
  kind: "Self",
  plural: "selves",
  singular: "self",
  namespaced: false,
  description: "Self describes the caller.",
  schema: { status: { type: "object", description: "Who you are." } },
  strategy: {},
  action: {
    kind: "Self",
    description: "Self describes the caller.",
    schema: { status: { type: "object", description: "Who you are." } },
    verbs: ["create"],
    handle: echo,
  },
};

export const configsDefinition: ResourceDefinition = {
  group: GROUP,
  version: "v1",
  kind: "Config",
  plural: "configs",
  singular: "config",
  namespaced: false,
  description: "Config holds the platform configuration.",
  verbs: ["update", "get", "create", "patch"],
  schema: {
    spec: {
      type: "object",
      description: "Raw configuration.",
      properties: { raw: { type: "string", description: "YAML." } },
    },
    status: {
      type: "object",
      description: "Parsed configuration.",
      properties: {
        auth: {
          type: "object",
          description: "Authentication settings.",
          properties: { password: { type: "object", description: "Password login.", properties: {} } },
        },
      },
    },
  },
  strategy: {},
};

export const servicesDefinition: ResourceDefinition = {
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  singular: "service",
  shortNames: ["svc"],
  categories: ["all"],
  namespaced: true,
  description: "Service is a named abstraction of software service.",
  schema: { spec: { type: "object", description: "Spec." }, status: { type: "object", description: "Status." } },
  strategy: {},
  statusSubresource: true,
};

export const allDefinitions: ResourceDefinition[] = [
  usersDefinition,
  instancesDefinition,
  selvesDefinition,
  configsDefinition,
  servicesDefinition,
];
