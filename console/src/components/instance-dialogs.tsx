// What a virtual cluster offers its readers, as row actions and buttons: download its kubeconfig (token or client
// certificate, certificate TTL), copy the `virtualcluster connect` command, issue a direct cluster endpoint token
// (shown once); each only where the caller's rules allow it.

import {
  Alert,
  ClipboardCopy,
  FormGroup,
  FormHelperText,
  FormSelect,
  FormSelectOption,
  HelperText,
  HelperTextItem,
  NumberInput,
  Radio,
} from "@patternfly/react-core";
import { useState } from "react";
import { api, mgmt } from "../lib/api.ts";
import type { Permissions } from "../lib/permissions.ts";
import type { Session } from "../lib/session.ts";
import { FormModal, ResultModal } from "./resource-list.tsx";

const V1 = "management.platform.sh/v1";

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "application/yaml" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function KubeconfigDialog({
  namespace,
  instance,
  onClose,
}: {
  namespace: string;
  instance: string;
  onClose: () => void;
}) {
  const [form, setForm] = useState<"token" | "cert">("token");
  const [ttlHours, setTtlHours] = useState<number | "">(24);
  const submit = async () => {
    const spec = form === "cert" ? { clientCert: true, certificateTTL: Math.round(Number(ttlHours || 0) * 3600) } : {};
    const result = await api.create<{ status?: { kubeConfig?: string } }>(
      `${mgmt("namespaces", namespace, "virtualclusterinstances", instance)}/kubeconfig`,
      { apiVersion: V1, kind: "VirtualClusterInstanceKubeConfig", spec },
    );
    download(`${instance}.kubeconfig`, result.status?.kubeConfig ?? "");
    return undefined;
  };
  return (
    <FormModal
      title={`Kubeconfig of ${instance}`}
      id="kubeconfig-form"
      submitLabel="Download"
      failure="The kubeconfig was not issued"
      variant="small"
      onSubmit={submit}
      onClose={onClose}
    >
      <FormGroup role="radiogroup" fieldId="kubeconfig-form-kind" label="Credential" isStack>
        <Radio
          id="kubeconfig-token"
          name="kubeconfig-kind"
          label="Access token"
          description="A new access key of yours, limited to this virtual cluster"
          isChecked={form === "token"}
          onChange={() => setForm("token")}
        />
        <Radio
          id="kubeconfig-cert"
          name="kubeconfig-kind"
          label="Client certificate"
          isChecked={form === "cert"}
          onChange={() => setForm("cert")}
        />
      </FormGroup>
      {form === "cert" && (
        <FormGroup label="Certificate TTL (hours)" fieldId="kubeconfig-ttl">
          <NumberInput
            id="kubeconfig-ttl"
            inputName="kubeconfig-ttl"
            inputAriaLabel="Certificate TTL (hours)"
            minusBtnAriaLabel="Fewer hours"
            plusBtnAriaLabel="More hours"
            value={ttlHours}
            min={0}
            onMinus={() => setTtlHours(Math.max(0, Number(ttlHours || 0) - 1))}
            onPlus={() => setTtlHours(Number(ttlHours || 0) + 1)}
            onChange={(event) => {
              const value = (event.target as HTMLInputElement).value;
              setTtlHours(value === "" ? "" : Number(value));
            }}
          />
          <FormHelperText>
            <HelperText>
              <HelperTextItem>0: the cluster's signing default (typically one year).</HelperTextItem>
            </HelperText>
          </FormHelperText>
        </FormGroup>
      )}
    </FormModal>
  );
}

function TokenDialog({ project, instance, onClose }: { project: string; instance: string; onClose: () => void }) {
  const [ttl, setTtl] = useState("3600");
  const [token, setToken] = useState<string>();
  const submit = async () => {
    const result = await api.create<{ status?: { token?: string } }>(mgmt("directclusterendpointtokens"), {
      apiVersion: V1,
      kind: "DirectClusterEndpointToken",
      spec: { ttl: Number(ttl), scope: { virtualClusters: [{ project, virtualCluster: instance }] } },
    });
    setToken(result.status?.token ?? "");
    return false;
  };
  if (token !== undefined) {
    return (
      <ResultModal title={`Direct cluster endpoint token for ${instance}`} onClose={onClose}>
        <Alert variant="warning" isInline title="Copy the token now: it is shown only this once." />
        <ClipboardCopy
          isReadOnly
          hoverTip="Copy"
          clickTip="Copied"
          textAriaLabel="Endpoint token"
          toggleAriaLabel="Show the whole token"
        >
          {token}
        </ClipboardCopy>
      </ResultModal>
    );
  }
  return (
    <FormModal
      title={`Direct cluster endpoint token for ${instance}`}
      id="token-form"
      submitLabel="Issue token"
      failure="The token was not issued"
      onSubmit={submit}
      onClose={onClose}
    >
      <FormGroup label="Valid for" fieldId="token-ttl">
        <FormSelect id="token-ttl" value={ttl} onChange={(_e, v) => setTtl(v)}>
          <FormSelectOption value="900" label="15 minutes" />
          <FormSelectOption value="3600" label="1 hour" />
          <FormSelectOption value="28800" label="8 hours" />
          <FormSelectOption value="86400" label="1 day" />
        </FormSelect>
      </FormGroup>
    </FormModal>
  );
}

function ConnectDialog({ project, instance, onClose }: { project: string; instance: string; onClose: () => void }) {
  return (
    <ResultModal title={`Connect to ${instance}`} onClose={onClose}>
      <p>Run this where the virtualcluster command-line client is logged in to the platform:</p>
      <ClipboardCopy
        isReadOnly
        hoverTip="Copy"
        clickTip="Copied"
        textAriaLabel="Connect command"
        toggleAriaLabel="Show the command"
      >
        {`virtualcluster connect ${instance} --project ${project}`}
      </ClipboardCopy>
    </ResultModal>
  );
}

export type Dialog = { kind: "kubeconfig" | "connect" | "token"; instance: string };

/** The actions on one instance the caller may take (the namespace's rules and the cluster-wide ones). */
export function instanceActions(
  session: Session,
  rules: Permissions | undefined,
  name: string,
  open: (d: Dialog) => void,
) {
  return [
    ...(rules?.can("create", "virtualclusterinstances/kubeconfig", name)
      ? [{ title: "Download kubeconfig", onClick: () => open({ kind: "kubeconfig", instance: name }) }]
      : []),
    { title: "Copy connect command", onClick: () => open({ kind: "connect", instance: name }) },
    ...(session.can("create", "directclusterendpointtokens")
      ? [{ title: "Issue endpoint token", onClick: () => open({ kind: "token", instance: name }) }]
      : []),
  ];
}

export function InstanceDialogs({
  project,
  namespace,
  dialog,
  close,
}: {
  project: string;
  namespace: string;
  dialog?: Dialog;
  close: () => void;
}) {
  if (dialog?.kind === "kubeconfig")
    return <KubeconfigDialog namespace={namespace} instance={dialog.instance} onClose={close} />;
  if (dialog?.kind === "connect") return <ConnectDialog project={project} instance={dialog.instance} onClose={close} />;
  if (dialog?.kind === "token") return <TokenDialog project={project} instance={dialog.instance} onClose={close} />;
  return null;
}
