// The platform's API prefix on its own: the CLI's error printer (through platform-client.ts) needs it without
// loading the kubeconfig reader and its YAML parser into every command.

/** The platform serves its API under this prefix of its host. */
export const PLATFORM_API_PREFIX = "/kubernetes/management";
