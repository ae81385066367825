// Config: the platform Config's YAML (spec.raw) in an editor with line numbers; the server's validation errors shown
// at their lines; secrets read as "<redacted>" and saving that marker keeps them; read-only with a notice when
// disableConfigEndpoint is set (the config file is then the only way to change it).

import { Alert, Button, List, ListItem, PageSection, Title } from "@patternfly/react-core";
import { useEffect, useMemo, useRef, useState } from "react";
import { ErrorAlert, Loading } from "../components/common.tsx";
import { ApiError, api, errorMessage, mgmt } from "../lib/api.ts";
import { configLineErrors, type LineError } from "../lib/config-errors.ts";
import type { Config } from "../lib/kube.ts";

const NAME = "platform-config";

export default function ConfigPage() {
  const [config, setConfig] = useState<Config>();
  const [text, setText] = useState("");
  const [loadError, setLoadError] = useState<unknown>();
  const [problems, setProblems] = useState<LineError[]>([]);
  const [saveError, setSaveError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    api.get<Config>(mgmt("configs", NAME)).then(
      (loaded) => {
        setConfig(loaded);
        setText(loaded.spec?.raw ?? "");
      },
      (error) => {
        if (error instanceof ApiError && error.code === 404) {
          setConfig({ apiVersion: "management.platform.sh/v1", kind: "Config", metadata: { name: NAME } });
          return;
        }
        setLoadError(error);
      },
    );
  }, []);

  const lines = useMemo(() => Math.max(1, text.split("\n").length), [text]);
  const errorLines = useMemo(() => new Set(problems.map((p) => p.line).filter((l) => l !== undefined)), [problems]);
  const readOnly = config?.status?.disableConfigEndpoint === true;

  // biome-ignore lint/correctness/useExhaustiveDependencies: the editor grows with its text
  useEffect(() => {
    if (area.current) {
      area.current.style.height = "auto";
      area.current.style.height = `${area.current.scrollHeight}px`;
    }
  }, [text]);

  const save = async () => {
    setBusy(true);
    setProblems([]);
    setSaveError(undefined);
    setSaved(false);
    try {
      const body = {
        apiVersion: "management.platform.sh/v1",
        kind: "Config",
        metadata: { name: NAME, resourceVersion: config?.metadata.resourceVersion },
        spec: { raw: text },
      };
      const next = await api.replace<Config>(mgmt("configs", NAME), body);
      setConfig(next);
      setText(next.spec?.raw ?? text);
      setSaved(true);
    } catch (failure) {
      if (failure instanceof ApiError && failure.code === 422) setProblems(configLineErrors(failure.status));
      else setSaveError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  };

  const goTo = (line: number) => {
    const element = area.current;
    if (!element) return;
    const offsets = text.split("\n").slice(0, line - 1);
    const start = offsets.reduce((sum, l) => sum + l.length + 1, 0);
    element.focus();
    element.setSelectionRange(start, start + (text.split("\n")[line - 1]?.length ?? 0));
  };

  if (loadError) return <ErrorAlert error={loadError} title="The Config cannot be read" />;
  if (!config) return <Loading what="the Config" />;
  return (
    <PageSection>
      <Title headingLevel="h1">Config</Title>
      {readOnly && (
        <Alert variant="info" isInline title="The Config is read-only here">
          disableConfigEndpoint is set: the platform config is managed through its config file. Edit the file given to
          `platform start --config`.
        </Alert>
      )}
      <p>Secrets read as &lt;redacted&gt;; leave the marker in place to keep a stored secret.</p>
      {problems.length > 0 && (
        <Alert variant="danger" isInline title="The Config was not saved" role="alert">
          <List>
            {problems.map((problem) => (
              <ListItem key={`${problem.line}-${problem.field}-${problem.message}`}>
                {problem.line !== undefined ? (
                  <Button variant="link" isInline onClick={() => goTo(problem.line ?? 1)}>
                    Line {problem.line}
                  </Button>
                ) : null}
                {problem.line !== undefined ? ": " : ""}
                {problem.field ? `${problem.field}: ` : ""}
                {problem.message}
              </ListItem>
            ))}
          </List>
        </Alert>
      )}
      {saveError && (
        <Alert variant="danger" isInline title="The Config was not saved" role="alert">
          {saveError}
        </Alert>
      )}
      {saved && <Alert variant="success" isInline title="Config saved" />}
      <div className="vcp-yaml">
        <div className="vcp-yaml-gutter" aria-hidden="true">
          {Array.from({ length: lines }, (_, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a line number is the row's identity
            <div key={i} className={errorLines.has(i + 1) ? "vcp-line-error" : undefined} data-line={i + 1}>
              {errorLines.has(i + 1) ? `! ${i + 1}` : i + 1}
            </div>
          ))}
        </div>
        <textarea
          ref={area}
          aria-label="Platform config (YAML)"
          spellCheck={false}
          value={text}
          readOnly={readOnly}
          onChange={(event) => setText(event.target.value)}
        />
      </div>
      {!readOnly && (
        <div style={{ marginTop: "1rem" }}>
          <Button onClick={save} isLoading={busy} isDisabled={busy}>
            Save
          </Button>
        </div>
      )}
    </PageSection>
  );
}
