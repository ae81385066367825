// A login to a platform as the CLI stores it (`virtualcluster platform login`) and the platform client uses it.

export interface PlatformLogin {
  /** Normalised base URL without the API prefix, e.g. https://platform.example.com:8443. */
  host: string;
  accessKey?: string;
  /** Skip certificate verification. */
  insecure?: boolean;
  /** Base64 of the PEM bundle that signs the platform's certificate (kubeconfig style). */
  certificateAuthorityData?: string;
}
