// Known open-redirect payloads (the forms of docs/wave3 "Redirect checks", OWASP's and PortSwigger's lists) aimed at
// `host`, for tests of every place that sends a browser back somewhere: each must be refused or stay on the
// platform. Test helper only.

/** Payloads that try to leave for `host`; written as they would arrive in a query parameter, already decoded once. */
export function openRedirectPayloads(host = "evil.example.com"): string[] {
  return [
    // Scheme-relative and backslash forms.
    `//${host}`,
    `//${host}/`,
    `///${host}`,
    `////${host}`,
    `/\\${host}`,
    `\\/${host}`,
    `\\\\${host}`,
    `/\\/${host}`,
    // Dot segments that collapse to "//".
    `/.//${host}`,
    `/./\\${host}`,
    `/a/..//${host}`,
    `/a/../\\${host}`,
    `/%2e//${host}`,
    `/.%2e//${host}`,
    `/%2e%2e//${host}`,
    `/.%2e/`,
    `/a/%2e%2e//${host}`,
    // Percent-encoded slashes and backslashes, once and twice.
    `%2f%2f${host}`,
    `/%2f${host}`,
    `/%2F%2F${host}`,
    `/%5c${host}`,
    `/%5C${host}`,
    `%5c%5c${host}`,
    `/%252f%252f${host}`,
    `/%255c${host}`,
    // Tabs, carriage returns and newlines, which URL parsers strip.
    `/\t/${host}`,
    `/\n/${host}`,
    `/\r/${host}`,
    `\t//${host}`,
    `/%09/${host}`,
    `/%0a/${host}`,
    `/%0d/${host}`,
    `ht\ttps://${host}`,
    `https:\n//${host}`,
    // Schemes, in every case, with and without slashes.
    `https://${host}`,
    `http://${host}`,
    `https:${host}`,
    `https:/${host}`,
    `https:\\\\${host}`,
    `HTTPS://${host}`,
    `HtTpS://${host}`,
    `javascript:alert(1)`,
    `JaVaScRiPt:alert(1)`,
    `java\tscript:alert(1)`,
    `data:text/html,<script>alert(1)</script>`,
    `vbscript:msgbox(1)`,
    // Userinfo and hosts that look like paths.
    `/@${host}`,
    `//@${host}`,
    `/platform.invalid@${host}`,
    `https://platform.invalid@${host}`,
    `${host}`,
    `@${host}`,
    // Leading spaces and other characters URL parsers skip.
    ` //${host}`,
    `\u0000//${host}`,
    `/\u0000/${host}`,
    // Overlong and invalid UTF-8 encodings of "/", "." and "\".
    `/%c0%af${host}`,
    `/%c0%ae%c0%ae//${host}`,
    `/%e0%80%af${host}`,
    `/%c1%9c${host}`,
    `/%ff/${host}`,
    // Unicode look-alikes of "/" and ".", which IDNA may map.
    `/\uff0f${host}`,
    `\uff0f\uff0f${host}`,
    `/\u3002/${host}`,
  ];
}
