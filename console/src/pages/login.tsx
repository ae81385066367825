// /login?return=<path of this platform>: the password form and a button per single sign-on connector
// (GET /auth/info), the legal text of uiSettings (sanitised), then the browser goes to the return path.
// Password login from here sets the same HttpOnly session cookie (vcp_session) an SSO login sets.

import {
  ActionGroup,
  Alert,
  Button,
  Divider,
  Form,
  FormGroup,
  LoginPage as PfLoginPage,
  Stack,
  StackItem,
  TextInput,
} from "@patternfly/react-core";
import { type FormEvent, useEffect, useState } from "react";
import { API, ApiError, apiRequest, CONSOLE_HEADERS, errorMessage } from "../lib/api.ts";
import type { ConsoleSettings } from "../lib/branding.ts";
import type { Self } from "../lib/kube.ts";
import { safeReturnPath } from "../lib/return-path.ts";
import { useQuery } from "../lib/router.tsx";
import { sanitizeHtml } from "../lib/sanitize-html.ts";

interface AuthInfo {
  password: { enabled: boolean };
  connectors: { id: string; displayName: string; type?: string; providerType?: string; loginPath: string }[];
}

export function LoginPage({ settings }: { settings: ConsoleSettings }) {
  const target = safeReturnPath(useQuery("return")) ?? "/";
  const [info, setInfo] = useState<AuthInfo>();
  const [infoError, setInfoError] = useState<unknown>();
  const [signedInAs, setSignedInAs] = useState<string>();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  useEffect(() => {
    document.title = "Log in · Virtual Cluster Platform";
    fetch("/auth/info", { headers: { Accept: "application/json" } })
      .then(async (response) => {
        if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => ({})));
        setInfo((await response.json()) as AuthInfo);
      })
      .catch(setInfoError);
    apiRequest<Self>(`${API}/selves`, {
      method: "POST",
      body: { apiVersion: "management.platform.sh/v1", kind: "Self", spec: {} },
      allowUnauthorized: true,
    }).then(
      (self) => setSignedInAs(self.status?.user?.username ?? self.status?.user?.name),
      () => undefined,
    );
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const response = await fetch("/auth/password/login", {
        method: "POST",
        headers: { ...CONSOLE_HEADERS, "Content-Type": "application/json", Accept: "application/json" },
        credentials: "same-origin",
        body: JSON.stringify({ username, password }),
      });
      if (!response.ok) {
        const status = await response.json().catch(() => ({}));
        throw new ApiError(response.status, status);
      }
      window.location.assign(target);
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  };

  const legal = settings.legalTemplate ? sanitizeHtml(settings.legalTemplate) : "";
  const connectors = info?.connectors ?? [];
  return (
    <PfLoginPage
      brandImgSrc={settings.logoURL}
      brandImgAlt={settings.logoURL ? "Virtual Cluster Platform" : undefined}
      loginTitle="Log in to the Virtual Cluster Platform"
      textContent="Manage users, access keys, projects and virtual clusters."
      footerListItems={<li>Version {settings.platformVersion}</li>}
    >
      <Stack hasGutter>
        {signedInAs && (
          <StackItem>
            <Alert variant="info" isInline title={`You are logged in as ${signedInAs}`}>
              <Button variant="link" isInline component="a" href={target}>
                Continue as {signedInAs}
              </Button>
            </Alert>
          </StackItem>
        )}
        {infoError ? (
          <StackItem>
            <Alert variant="danger" isInline title="Login methods cannot be loaded">
              {errorMessage(infoError)}
            </Alert>
          </StackItem>
        ) : null}
        {error && (
          <StackItem>
            <Alert variant="danger" isInline title="Login failed" role="alert">
              {error}
            </Alert>
          </StackItem>
        )}
        {info?.password.enabled !== false && (
          <StackItem>
            <Form onSubmit={submit} aria-label="Password login">
              <FormGroup label="Username" isRequired fieldId="login-username">
                <TextInput
                  id="login-username"
                  name="username"
                  autoComplete="username"
                  isRequired
                  value={username}
                  onChange={(_event, value) => setUsername(value)}
                />
              </FormGroup>
              <FormGroup label="Password" isRequired fieldId="login-password">
                <TextInput
                  id="login-password"
                  name="password"
                  type="password"
                  autoComplete="current-password"
                  isRequired
                  value={password}
                  onChange={(_event, value) => setPassword(value)}
                />
              </FormGroup>
              <ActionGroup>
                <Button type="submit" variant="primary" isBlock isLoading={busy} isDisabled={busy}>
                  Log in
                </Button>
              </ActionGroup>
            </Form>
          </StackItem>
        )}
        {connectors.length > 0 && (
          <>
            {info?.password.enabled !== false && <Divider />}
            {connectors.map((connector) => (
              <StackItem key={connector.id}>
                <Button
                  component="a"
                  variant="secondary"
                  isBlock
                  href={`${connector.loginPath}?return=${encodeURIComponent(target)}`}
                >
                  Log in with {connector.displayName}
                  {connector.providerType && connector.providerType !== connector.displayName
                    ? ` (${connector.providerType})`
                    : ""}
                </Button>
              </StackItem>
            ))}
          </>
        )}
        {legal && (
          <StackItem>
            {/* biome-ignore lint/security/noDangerouslySetInnerHtml: legalTemplate is HTML by design, sanitised by sanitizeHtml (and the CSP blocks inline scripts) */}
            <div className="vcp-legal" data-testid="legal" dangerouslySetInnerHTML={{ __html: legal }} />
          </StackItem>
        )}
      </Stack>
    </PfLoginPage>
  );
}
