// What the platform keeps of a connected cluster's agent's answers (agent-api.ts). Anyone who owns a Cluster can mint
// its agent key and run an agent of their own, so an answer is untrusted input, bounded only by callAgent's 1 MiB:
// every answer goes through the normaliser of its kind before the platform stores it or decides anything on it.
//
//   - versions and other short strings: at most MAX_AGENT_SHORT_STRING characters, no control characters; anything
//     else is dropped (a version that long is not a version);
//   - messages: at most MAX_AGENT_MESSAGE characters, cut with an ellipsis; control characters (but tab and newline)
//     become U+FFFD, so a message shown in a terminal cannot drive it;
//   - lists (spaces, virtual clusters): strings of at most MAX_AGENT_LIST_ENTRY characters without control characters,
//     no repeats, the first MAX_AGENT_LIST_ENTRIES of them;
//   - numbers: finite and not negative (integers where the schema says so, counts at most 2^53 - 1);
//   - the direct endpoint: an https:// URL that parses (no credentials, query or fragment) of at most
//     MAX_DIRECT_ENDPOINT_URL characters, and a CA of PEM certificates that parse, at most MAX_CERTIFICATE_AUTHORITY
//     characters; otherwise there is none;
//   - phases: one of the kind's own; anything else becomes Failed, saying the agent answered something the platform
//     does not understand;
//   - anything of the wrong type is dropped. Only known fields are read, none walked recursively, and nothing throws.

import { X509Certificate } from "node:crypto";
import { isDateTime } from "../../apimachinery/schema-ajv.ts";
import type { AgentInfo, ClusterMetricsState, HelmReleaseState, WorkloadState } from "./agent-api.ts";

/** Versions (Kubernetes, agent, helm, chart) and other short strings. */
export const MAX_AGENT_SHORT_STRING = 64;
/** Messages, as conditions and statuses show them. */
export const MAX_AGENT_MESSAGE = 1024;
/** Entries kept of a list (spaces, virtual clusters). */
export const MAX_AGENT_LIST_ENTRIES = 10_000;
/** Characters of one list entry (`<project>/<name>`): a DNS subdomain's length. */
export const MAX_AGENT_LIST_ENTRY = 253;
/** Characters of the direct endpoint's URL. */
export const MAX_DIRECT_ENDPOINT_URL = 512;
/** Characters of the direct endpoint's CA (PEM): room for a chain of several certificates. */
export const MAX_CERTIFICATE_AUTHORITY = 16 * 1024;

const ELLIPSIS = "…";
// C0 controls, DEL and C1 controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const MESSAGE_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// Whitespace, backslashes and control characters, which the URL parser drops or reads as "/"; credentials, a query
// or a fragment (even empty ones, which the parsed URL would not show).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const URL_REFUSED = /[\s\\@?#\u0000-\u001f\u007f-\u009f]/;
const PEM_BLOCK = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/g;

const WORKLOAD_PHASES: readonly WorkloadState["phase"][] = ["Ready", "Pending", "Failed", "Gone"];
const HELM_RELEASE_PHASES: readonly HelmReleaseState["phase"][] = ["Deployed", "Pending", "Failed", "Gone"];
const METRICS_PHASES: readonly ClusterMetricsState["phase"][] = ["Running", "Off", "Failed"];

type Fields = Record<string, unknown>;

/** The answer's fields, when it is a JSON object; none otherwise. */
function fieldsOf(value: unknown): Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Fields) : {};
}

/** Cuts at `max` characters (ellipsis included), never between the halves of a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - ELLIPSIS.length;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end) + ELLIPSIS;
}

/** A short string (a version): 1 to MAX_AGENT_SHORT_STRING characters, no control characters; else undefined. */
export function normaliseShortString(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_AGENT_SHORT_STRING) return undefined;
  return CONTROL.test(value) ? undefined : value;
}

/** A message: at most MAX_AGENT_MESSAGE characters (cut with an ellipsis), control characters replaced. */
export function normaliseMessage(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  // Cut first: the replacement then runs over at most MAX_AGENT_MESSAGE characters, whatever came.
  return cut(value, MAX_AGENT_MESSAGE).replace(MESSAGE_CONTROL, "\ufffd");
}

/** The message of an agent's error answer (`{ message }`), bounded; "" when it has none. */
export function normaliseAgentError(body: unknown): string {
  return normaliseMessage(fieldsOf(body).message) ?? "";
}

/** A list of names: distinct strings of 1 to MAX_AGENT_LIST_ENTRY characters, the first MAX_AGENT_LIST_ENTRIES. */
export function normaliseNameList(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const kept = new Set<string>();
  // Bounded by the answer's size: at most 1 MiB of JSON, so at most about 350,000 entries to look at.
  for (const entry of value) {
    if (kept.size >= MAX_AGENT_LIST_ENTRIES) break;
    if (typeof entry !== "string" || entry.length === 0 || entry.length > MAX_AGENT_LIST_ENTRY) continue;
    if (!CONTROL.test(entry)) kept.add(entry);
  }
  return [...kept];
}

/** A finite number, not negative; else undefined. */
function amount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** A finite number, not negative, as a whole count of at most 2^53 - 1; else undefined. */
function count(value: unknown): number | undefined {
  const number = amount(value);
  return number === undefined ? undefined : Math.min(Math.floor(number), Number.MAX_SAFE_INTEGER);
}

/** An integer of 0 to 2^53 - 1 as it came (a revision, a generation); else undefined. */
function wholeNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The agent's own usage: all three numbers finite and not negative, or none at all. */
export function normaliseUsage(value: unknown): AgentInfo["usage"] {
  const fields = fieldsOf(value);
  const cpuSeconds = amount(fields.cpuSeconds);
  const residentMemoryBytes = count(fields.residentMemoryBytes);
  const apiRequests = count(fields.apiRequests);
  if (cpuSeconds === undefined || residentMemoryBytes === undefined || apiRequests === undefined) return undefined;
  return { cpuSeconds, residentMemoryBytes, apiRequests };
}

/** A CA as PEM certificates, each of which parses, at most MAX_CERTIFICATE_AUTHORITY characters; else undefined. */
function certificateAuthority(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > MAX_CERTIFICATE_AUTHORITY) return undefined;
  let blocks = 0;
  // Linear: the block's body class has no "-", so each match ends at the first END line.
  const rest = value.replace(PEM_BLOCK, (block) => {
    try {
      new X509Certificate(block);
      blocks++;
      return "";
    } catch {
      return "?";
    }
  });
  return blocks > 0 && rest.trim() === "" ? value : undefined;
}

/** An https:// URL that parses, without credentials, query or fragment; else undefined. */
function directEndpointUrl(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > MAX_DIRECT_ENDPOINT_URL) return undefined;
  // The literal prefix too: the URL parser would take "https:host" and "https:\\host" for https://host.
  if (!value.toLowerCase().startsWith("https://") || URL_REFUSED.test(value)) return undefined;
  const url = URL.parse(value);
  return url?.protocol === "https:" && url.hostname !== "" ? value : undefined;
}

/** The direct endpoint: an https:// URL and a PEM CA, both valid and bounded, or none. */
export function normaliseDirectEndpoint(value: unknown): AgentInfo["directEndpoint"] {
  const fields = fieldsOf(value);
  const url = directEndpointUrl(fields.url);
  const ca = url === undefined ? undefined : certificateAuthority(fields.certificateAuthority);
  return url === undefined || ca === undefined ? undefined : { url, certificateAuthority: ca };
}

/** How an unknown phase is named in the Failed state that replaces it. */
function unknownPhase(kind: string, phase: unknown, message: string | undefined): string {
  const named =
    typeof phase === "string"
      ? `phase ${JSON.stringify(cut(phase, MAX_AGENT_SHORT_STRING))}`
      : phase === undefined
        ? "no phase"
        : `a phase of type ${phase === null ? "null" : Array.isArray(phase) ? "array" : typeof phase}`;
  const said = `the agent answered ${kind} the platform does not understand (${named})`;
  return normaliseMessage(message ? `${said}: ${message}` : said) ?? said;
}

function phaseOf<P extends string>(phases: readonly P[], value: unknown): P | undefined {
  return typeof value === "string" && (phases as readonly string[]).includes(value) ? (value as P) : undefined;
}

/** A space's or virtual cluster's state (PUT and DELETE of /spaces/…, /virtualclusters/…). */
export function normaliseWorkloadState(body: unknown): WorkloadState {
  const fields = fieldsOf(body);
  const message = normaliseMessage(fields.message);
  const phase = phaseOf(WORKLOAD_PHASES, fields.phase);
  if (!phase) return { phase: "Failed", message: unknownPhase("a workload state", fields.phase, message) };
  return {
    phase,
    ...(message === undefined ? {} : { message }),
    ...(fields.needsKey === true ? { needsKey: true } : {}),
  };
}

/** A HelmRelease's state (PUT and DELETE of /helmreleases/…). */
export function normaliseHelmReleaseState(body: unknown): HelmReleaseState {
  const fields = fieldsOf(body);
  const message = normaliseMessage(fields.message);
  const phase = phaseOf(HELM_RELEASE_PHASES, fields.phase);
  if (!phase) return { phase: "Failed", message: unknownPhase("a Helm release state", fields.phase, message) };
  const generation = wholeNumber(fields.generation);
  const revision = wholeNumber(fields.revision);
  const chartVersion = normaliseShortString(fields.chartVersion);
  const appliedTime = normaliseShortString(fields.appliedTime);
  return {
    phase,
    ...(message === undefined ? {} : { message }),
    ...(revision === undefined ? {} : { revision }),
    ...(chartVersion === undefined ? {} : { chartVersion }),
    ...(generation === undefined ? {} : { generation }),
    ...(appliedTime !== undefined && isDateTime(appliedTime) ? { appliedTime } : {}),
    ...(fields.wantsChart === true ? { wantsChart: true } : {}),
  };
}

/** The state of the cluster's metrics Prometheus (PUT and DELETE of /metrics, and AgentInfo's metrics). */
export function normaliseClusterMetricsState(body: unknown): ClusterMetricsState {
  const fields = fieldsOf(body);
  const message = normaliseMessage(fields.message);
  const phase = phaseOf(METRICS_PHASES, fields.phase);
  if (!phase) return { phase: "Failed", message: unknownPhase("a metrics state", fields.phase, message) };
  return { phase, ...(message === undefined ? {} : { message }) };
}

/**
 * The answer of GET /metrics/federate: its text as it came (callAgent bounds it, and the federation filter reads it
 * with a bounded parser) when it is a string, and a bounded message.
 */
export function normaliseFederationAnswer(body: unknown): { text?: string; message?: string } {
  const fields = fieldsOf(body);
  const message = normaliseMessage(fields.message);
  return {
    ...(typeof fields.text === "string" ? { text: fields.text } : {}),
    ...(message === undefined ? {} : { message }),
  };
}

/** GET /info: what a heartbeat records of the agent and its cluster. */
export function normaliseAgentInfo(body: unknown): AgentInfo {
  const fields = fieldsOf(body);
  const info: AgentInfo = {
    spaces: normaliseNameList(fields.spaces),
    virtualClusters: normaliseNameList(fields.virtualClusters),
  };
  const kubernetesVersion = normaliseShortString(fields.kubernetesVersion);
  if (kubernetesVersion !== undefined) info.kubernetesVersion = kubernetesVersion;
  const agentVersion = normaliseShortString(fields.agentVersion);
  if (agentVersion !== undefined) info.agentVersion = agentVersion;
  const helmVersion = normaliseShortString(fields.helmVersion);
  if (helmVersion !== undefined) info.helmVersion = helmVersion;
  const directEndpoint = normaliseDirectEndpoint(fields.directEndpoint);
  if (directEndpoint) info.directEndpoint = directEndpoint;
  const usage = normaliseUsage(fields.usage);
  if (usage) info.usage = usage;
  if (fields.metrics !== undefined) info.metrics = normaliseClusterMetricsState(fields.metrics);
  return info;
}
