// The exact `helm install` command for an app and a virtual cluster, as the Apps page shows it: the chart from its
// repository (--repo, so no `helm repo add` is needed), the version, the namespace, the kube context that
// `virtualcluster connect` (and the platform's kubeconfigs) name `virtualcluster_<instance>_<project>`, the
// repository's user name with the password read from the environment (never shown), and the initial values.

export interface HelmInstallInput {
  release: string;
  chart: string;
  repositoryUrl: string;
  version?: string;
  namespace: string;
  project: string;
  instance: string;
  username?: string;
  insecure?: boolean;
  /** Values YAML, passed on standard input when given. */
  values?: string;
}

/** Quotes a word for a POSIX shell when it needs it. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'"'"'`)}'`;
}

export function kubeContextName(project: string, instance: string): string {
  return `virtualcluster_${instance}_${project}`;
}

export function helmInstallCommand(input: HelmInstallInput): string {
  const words = [
    "helm",
    "install",
    input.release,
    input.chart,
    "--repo",
    input.repositoryUrl,
    ...(input.version ? ["--version", input.version] : []),
    "--namespace",
    input.namespace,
    "--create-namespace",
    "--kube-context",
    kubeContextName(input.project, input.instance),
    ...(input.username ? ["--username", input.username] : []),
    ...(input.insecure ? ["--insecure-skip-tls-verify"] : []),
  ].map(shellWord);
  // The password stays out of the command (and the shell's history): it comes from an environment variable.
  if (input.username) words.push('--password "$HELM_REPO_PASSWORD"');
  if (input.values?.trim()) {
    words.push("--values", "-");
    return `${words.join(" ")} <<'EOF'\n${input.values.replace(/\n?$/, "\n")}EOF`;
  }
  return words.join(" ");
}
