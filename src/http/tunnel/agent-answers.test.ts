import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import fc from "fast-check";
import { createCertificateAuthority } from "../../pki/certificate-authority.ts";
import {
  MAX_AGENT_LIST_ENTRIES,
  MAX_AGENT_LIST_ENTRY,
  MAX_AGENT_MESSAGE,
  MAX_AGENT_SHORT_STRING,
  MAX_CERTIFICATE_AUTHORITY,
  MAX_DIRECT_ENDPOINT_URL,
  normaliseAgentError,
  normaliseAgentInfo,
  normaliseClusterMetricsState,
  normaliseDirectEndpoint,
  normaliseFederationAnswer,
  normaliseHelmReleaseState,
  normaliseMessage,
  normaliseNameList,
  normaliseShortString,
  normaliseUsage,
  normaliseWorkloadState,
} from "./agent-answers.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters
const MESSAGE_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** Answers that are no object at all, or objects of nothing but the wrong types. */
const NOT_ANSWERS: unknown[] = [
  undefined,
  null,
  0,
  -1,
  "Ready",
  true,
  [],
  ["Ready"],
  { phase: 1 },
  { phase: ["Ready"] },
  { phase: { toString: "Ready" } },
  JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`),
];

let caPem = "";

before(async () => {
  caPem = (await createCertificateAuthority({ commonName: "direct endpoint CA", validityDays: 1 })).certPem;
});

describe("normaliseAgentInfo()", () => {
  it("normaliseAgentInfo() keeps a real agent's answer as it came", () => {
    const answer = {
      kubernetesVersion: "v1.31.0+k3s1",
      agentVersion: "v1.31.0-virtualcluster-platform.0.1.0",
      directEndpoint: { url: "https://127.0.0.1:8444", certificateAuthority: caPem },
      spaces: ["shop/dev", "shop/prod"],
      virtualClusters: ["shop/vc1"],
      usage: { cpuSeconds: 1.25, residentMemoryBytes: 52_428_800, apiRequests: 17 },
      helmVersion: "v3.14.4+g81c902a",
      metrics: { phase: "Running", message: "scraping 3 targets" },
    };
    assert.deepEqual(normaliseAgentInfo(answer), answer);
  });

  it("normaliseAgentInfo() drops a Kubernetes, agent or helm version longer than a version", () => {
    const huge = `v1.30.0-${"x".repeat(900_000)}`;
    const info = normaliseAgentInfo({ kubernetesVersion: huge, agentVersion: huge, helmVersion: huge, spaces: [] });
    assert.deepEqual(info, { spaces: [], virtualClusters: [] });
  });

  it("normaliseAgentInfo() drops fields of the wrong type and fields it does not know", () => {
    const info = normaliseAgentInfo({
      kubernetesVersion: 131,
      agentVersion: ["v1"],
      helmVersion: { v: 3 },
      directEndpoint: "https://127.0.0.1:8444",
      spaces: "shop/dev",
      virtualClusters: { 0: "shop/vc1" },
      usage: [1, 2, 3],
      extra: "x".repeat(1000),
    });
    assert.deepEqual(info, { spaces: [], virtualClusters: [] });
  });

  it("normaliseAgentInfo() answers empty lists for anything that is no object", () => {
    for (const body of NOT_ANSWERS) assert.deepEqual(normaliseAgentInfo(body), { spaces: [], virtualClusters: [] });
  });

  it("normaliseAgentInfo() makes an unknown metrics phase Failed", () => {
    const { metrics } = normaliseAgentInfo({ metrics: { phase: "Exploded" } });
    assert.equal(metrics?.phase, "Failed");
    assert.match(metrics?.message ?? "", /does not understand \(phase "Exploded"\)/);
  });
});

describe("normaliseShortString()", () => {
  it("normaliseShortString() keeps 1 to 64 characters without control characters, nothing else", () => {
    assert.equal(normaliseShortString("v1.31.0"), "v1.31.0");
    assert.equal(normaliseShortString("v".repeat(MAX_AGENT_SHORT_STRING)), "v".repeat(MAX_AGENT_SHORT_STRING));
    for (const value of ["", "v".repeat(MAX_AGENT_SHORT_STRING + 1), "v1\n", "\u001b[31mv1", "v1\u009b", 1, null]) {
      assert.equal(normaliseShortString(value), undefined, JSON.stringify(value));
    }
  });
});

describe("normaliseMessage()", () => {
  it("normaliseMessage() cuts a long message to 1024 characters with an ellipsis", () => {
    const message = normaliseMessage("m".repeat(1_000_000));
    assert.equal(message?.length, MAX_AGENT_MESSAGE);
    assert.ok(message?.endsWith("…"));
    assert.equal(normaliseMessage("m".repeat(MAX_AGENT_MESSAGE)), "m".repeat(MAX_AGENT_MESSAGE));
  });

  it("normaliseMessage() never cuts between the halves of a surrogate pair", () => {
    const message = normaliseMessage(`${"a".repeat(MAX_AGENT_MESSAGE - 2)}${"😀".repeat(10)}`) ?? "";
    assert.ok(message.isWellFormed());
    assert.equal(message, `${"a".repeat(MAX_AGENT_MESSAGE - 2)}…`);
  });

  it("normaliseMessage() replaces control characters but tab and newline", () => {
    assert.equal(
      normaliseMessage("helm: failed\n\tline 2\r\u001b[2J\u0000"),
      "helm: failed\n\tline 2\ufffd\ufffd[2J\ufffd",
    );
  });

  it("normaliseMessage() drops what is not a string", () => {
    for (const value of [1, null, ["x"], { message: "x" }]) assert.equal(normaliseMessage(value), undefined);
  });
});

describe("normaliseAgentError()", () => {
  it("normaliseAgentError() answers the bounded message of an error body, or nothing", () => {
    assert.equal(normaliseAgentError({ message: "no helm" }), "no helm");
    assert.equal(normaliseAgentError({ message: "e".repeat(5000) }).length, MAX_AGENT_MESSAGE);
    for (const body of NOT_ANSWERS) assert.equal(normaliseAgentError(body), "");
  });
});

describe("normaliseNameList()", () => {
  it("normaliseNameList() keeps the first 10,000 distinct names of at most 253 characters", () => {
    const names = Array.from({ length: 20_000 }, (_, i) => `project/space-${i}`);
    const kept = normaliseNameList(["shop/dev", "shop/dev", ...names]);
    assert.equal(kept.length, MAX_AGENT_LIST_ENTRIES);
    assert.deepEqual(kept.slice(0, 2), ["shop/dev", "project/space-0"]);
  });

  it("normaliseNameList() drops entries too long, empty, with control characters or not strings", () => {
    const long = `p/${"s".repeat(MAX_AGENT_LIST_ENTRY - 2)}`;
    const kept = normaliseNameList([long, `${long}s`, "", "shop/\u001b[2Jdev", 7, null, ["shop/dev"], "shop/ok"]);
    assert.deepEqual(kept, [long, "shop/ok"]);
  });
});

describe("normaliseUsage()", () => {
  it("normaliseUsage() keeps finite numbers that are not negative, counts as whole numbers", () => {
    assert.deepEqual(normaliseUsage({ cpuSeconds: 0.5, residentMemoryBytes: 1024.7, apiRequests: 1e300 }), {
      cpuSeconds: 0.5,
      residentMemoryBytes: 1024,
      apiRequests: Number.MAX_SAFE_INTEGER,
    });
  });

  it("normaliseUsage() drops the usage when any number is negative, not finite or not a number", () => {
    const good = { cpuSeconds: 1, residentMemoryBytes: 1, apiRequests: 1 };
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, "1", null, undefined]) {
      for (const field of Object.keys(good)) {
        assert.equal(normaliseUsage({ ...good, [field]: bad }), undefined, `${field}: ${String(bad)}`);
      }
    }
  });
});

describe("normaliseDirectEndpoint()", () => {
  it("normaliseDirectEndpoint() keeps an https:// URL with a PEM CA", () => {
    for (const url of ["https://127.0.0.1:8444", "https://[::1]:8444", "https://edge.example.com/direct"]) {
      assert.deepEqual(normaliseDirectEndpoint({ url, certificateAuthority: caPem }), {
        url,
        certificateAuthority: caPem,
      });
    }
    const chain = `${caPem}\n${caPem}`;
    assert.equal(
      normaliseDirectEndpoint({ url: "https://a:1", certificateAuthority: chain })?.certificateAuthority,
      chain,
    );
  });

  it("normaliseDirectEndpoint() refuses a URL that is not https://, does not parse, or carries more", () => {
    for (const url of [
      "http://127.0.0.1:8444",
      "HTTP://127.0.0.1:8444",
      "ftp://127.0.0.1",
      "javascript:alert(1)",
      "https:127.0.0.1:8444",
      "https:\\\\127.0.0.1:8444",
      "https://",
      "https://[::1",
      "https://user:pass@127.0.0.1:8444",
      "https://127.0.0.1:8444/?token=x",
      "https://127.0.0.1:8444/#",
      "https://127.0.0.1:8444\n",
      "https://127.0.0.1:\t8444",
      `https://${"a".repeat(MAX_DIRECT_ENDPOINT_URL)}`,
      42,
    ]) {
      assert.equal(normaliseDirectEndpoint({ url, certificateAuthority: caPem }), undefined, JSON.stringify(url));
    }
  });

  it("normaliseDirectEndpoint() refuses a CA that is not PEM certificates or is too large", () => {
    const block = (body: string) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
    const padded = `${caPem}${"\n".repeat(MAX_CERTIFICATE_AUTHORITY - caPem.length + 1)}`;
    for (const certificateAuthority of [
      "",
      "not a certificate",
      block("AAAA"),
      `${caPem}-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n`,
      `${caPem}trailing`,
      caPem.replace("-----END CERTIFICATE-----", ""),
      padded,
      ["x"],
    ]) {
      assert.equal(normaliseDirectEndpoint({ url: "https://a:1", certificateAuthority }), undefined);
    }
  });
});

describe("normaliseWorkloadState()", () => {
  it("normaliseWorkloadState() keeps a known phase, its message and needsKey", () => {
    assert.deepEqual(normaliseWorkloadState({ phase: "Pending", message: "starting", needsKey: true }), {
      phase: "Pending",
      message: "starting",
      needsKey: true,
    });
    assert.deepEqual(normaliseWorkloadState({ phase: "Gone", needsKey: "yes" }), { phase: "Gone" });
  });

  it("normaliseWorkloadState() makes an unknown phase Failed, saying the platform does not understand it", () => {
    const state = normaliseWorkloadState({ phase: "Ready!".repeat(100_000), message: "m".repeat(10_000) });
    assert.equal(state.phase, "Failed");
    assert.match(
      state.message ?? "",
      /^the agent answered a workload state the platform does not understand \(phase "/,
    );
    assert.ok((state.message ?? "").length <= MAX_AGENT_MESSAGE);
    for (const body of NOT_ANSWERS) {
      const failed = normaliseWorkloadState(body);
      assert.equal(failed.phase, "Failed");
      assert.match(failed.message ?? "", /does not understand/);
    }
  });
});

describe("normaliseHelmReleaseState()", () => {
  it("normaliseHelmReleaseState() keeps a real answer as it came", () => {
    const answer = {
      phase: "Deployed",
      message: "installed",
      revision: 3,
      chartVersion: "1.2.3",
      generation: 2,
      appliedTime: "2025-01-31T10:00:00Z",
    };
    assert.deepEqual(normaliseHelmReleaseState(answer), answer);
    const wanting = { phase: "Pending", generation: 3, wantsChart: true };
    assert.deepEqual(normaliseHelmReleaseState(wanting), wanting);
    assert.deepEqual(normaliseHelmReleaseState({ ...wanting, wantsChart: "yes" }), { phase: "Pending", generation: 3 });
  });

  it("normaliseHelmReleaseState() drops a revision, generation, chart version or time out of bounds", () => {
    for (const [field, value] of [
      ["revision", -1],
      ["revision", 1.5],
      ["revision", "3"],
      ["generation", 2 ** 60],
      ["chartVersion", "1".repeat(MAX_AGENT_SHORT_STRING + 1)],
      ["chartVersion", 123],
      ["appliedTime", "yesterday"],
      ["appliedTime", "2023-02-29T10:00:00Z"],
      ["appliedTime", `2025-01-31T10:00:00.${"1".repeat(100)}Z`],
    ] as const) {
      const state = normaliseHelmReleaseState({ phase: "Deployed", [field]: value });
      assert.deepEqual(state, { phase: "Deployed" }, `${field}: ${String(value)}`);
    }
  });

  it("normaliseHelmReleaseState() makes an unknown phase Failed, saying the platform does not understand it", () => {
    const state = normaliseHelmReleaseState({ phase: "Superseded", message: "helm says so", generation: 4 });
    assert.deepEqual(state, {
      phase: "Failed",
      message:
        'the agent answered a Helm release state the platform does not understand (phase "Superseded"): helm says so',
    });
  });
});

describe("normaliseClusterMetricsState()", () => {
  it("normaliseClusterMetricsState() keeps a known phase and a bounded message", () => {
    assert.deepEqual(normaliseClusterMetricsState({ phase: "Off" }), { phase: "Off" });
    const state = normaliseClusterMetricsState({ phase: "Running", message: "x".repeat(2000) });
    assert.equal(state.message?.length, MAX_AGENT_MESSAGE);
  });

  it("normaliseClusterMetricsState() makes an unknown phase Failed", () => {
    assert.deepEqual(normaliseClusterMetricsState({ phase: null }), {
      phase: "Failed",
      message: "the agent answered a metrics state the platform does not understand (a phase of type null)",
    });
  });
});

describe("normaliseFederationAnswer()", () => {
  it("normaliseFederationAnswer() keeps text that is a string and a bounded message", () => {
    assert.deepEqual(normaliseFederationAnswer({ text: "a 1\n" }), { text: "a 1\n" });
    assert.deepEqual(normaliseFederationAnswer({ text: ["a 1"], message: "m".repeat(5000) }), {
      message: `${"m".repeat(MAX_AGENT_MESSAGE - 1)}…`,
    });
    for (const body of NOT_ANSWERS) assert.deepEqual(normaliseFederationAnswer(body), {});
  });
});

// ---- properties -----------------------------------------------------------------------------------------------

const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 80 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.nat({ max: 3000 }).map((n) => "x".repeat(n)),
  fc.constantFrom("Ready", "Pending", "Failed", "Gone", "Deployed", "Running", "Off", "https://127.0.0.1:1"),
);
const value = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  text,
  fc.double(),
  fc.integer(),
  fc.array(text, { maxLength: 30 }),
);
const answer = fc.oneof(
  value,
  fc.record(
    {
      phase: value,
      message: value,
      needsKey: value,
      revision: fc.oneof(fc.double(), value),
      chartVersion: value,
      generation: fc.oneof(fc.double(), value),
      wantsChart: fc.oneof(fc.boolean(), value),
      appliedTime: fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        value,
      ),
      text: value,
      kubernetesVersion: value,
      agentVersion: value,
      helmVersion: value,
      directEndpoint: fc.oneof(
        value,
        fc.record({
          url: fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), value),
          // The real CA (made before the tests run) some of the time, so the accepting path is walked too.
          certificateAuthority: fc.oneof(
            fc.constant(null).map(() => caPem),
            fc.string({ maxLength: 40 }).map((tail) => caPem + tail),
            value,
          ),
        }),
      ),
      spaces: fc.oneof(value, fc.array(text, { maxLength: 200 })),
      virtualClusters: value,
      usage: fc.oneof(
        value,
        fc.record({
          cpuSeconds: fc.double(),
          residentMemoryBytes: fc.double(),
          apiRequests: fc.oneof(fc.double(), value),
        }),
      ),
      metrics: value,
    },
    { requiredKeys: [] },
  ),
);

function checkShort(value: unknown, what: string): void {
  if (value === undefined) return;
  assert.equal(typeof value, "string", what);
  const short = value as string;
  assert.ok(short.length >= 1 && short.length <= MAX_AGENT_SHORT_STRING && !CONTROL.test(short), what);
}

function checkMessage(value: unknown): void {
  if (value === undefined) return;
  assert.equal(typeof value, "string");
  assert.ok((value as string).length <= MAX_AGENT_MESSAGE && !MESSAGE_CONTROL.test(value as string));
}

function checkKeys(object: object, allowed: string[]): void {
  for (const [key, field] of Object.entries(object)) {
    assert.ok(allowed.includes(key), `unexpected field ${key}`);
    assert.notEqual(field, undefined, `field ${key} is present but undefined`);
  }
}

function checkList(list: unknown): void {
  assert.ok(Array.isArray(list));
  assert.ok(list.length <= MAX_AGENT_LIST_ENTRIES);
  assert.equal(new Set(list).size, list.length);
  for (const entry of list) {
    assert.equal(typeof entry, "string");
    assert.ok(entry.length >= 1 && entry.length <= MAX_AGENT_LIST_ENTRY && !CONTROL.test(entry));
  }
}

const count = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;

describe("normalisers, for any JSON the agent answers", () => {
  it("normaliseAgentInfo() always answers bounded fields of the right types, and never throws", () => {
    fc.assert(
      fc.property(answer, (body) => {
        const info = normaliseAgentInfo(body);
        checkKeys(info, [
          "kubernetesVersion",
          "agentVersion",
          "helmVersion",
          "directEndpoint",
          "spaces",
          "virtualClusters",
          "usage",
          "metrics",
        ]);
        checkShort(info.kubernetesVersion, "kubernetesVersion");
        checkShort(info.agentVersion, "agentVersion");
        checkShort(info.helmVersion, "helmVersion");
        checkList(info.spaces);
        checkList(info.virtualClusters);
        if (info.directEndpoint) {
          const { url, certificateAuthority } = info.directEndpoint;
          assert.ok(url.startsWith("https://") && url.length <= MAX_DIRECT_ENDPOINT_URL);
          assert.equal(new URL(url).protocol, "https:");
          assert.ok(certificateAuthority.length <= MAX_CERTIFICATE_AUTHORITY);
        }
        if (info.usage) {
          assert.ok(Number.isFinite(info.usage.cpuSeconds) && info.usage.cpuSeconds >= 0);
          assert.ok(count(info.usage.residentMemoryBytes) && count(info.usage.apiRequests));
        }
        if (info.metrics) assert.ok(["Running", "Off", "Failed"].includes(info.metrics.phase));
        checkMessage(info.metrics?.message);
        assert.deepEqual(JSON.parse(JSON.stringify(info)), info);
      }),
      { numRuns: 500 },
    );
  });

  it("normaliseWorkloadState(), normaliseHelmReleaseState() and normaliseClusterMetricsState() always answer a known phase and bounded fields", () => {
    fc.assert(
      fc.property(answer, (body) => {
        const workload = normaliseWorkloadState(body);
        checkKeys(workload, ["phase", "message", "needsKey"]);
        assert.ok(["Ready", "Pending", "Failed", "Gone"].includes(workload.phase));
        checkMessage(workload.message);
        assert.ok(workload.needsKey === undefined || workload.needsKey === true);

        const release = normaliseHelmReleaseState(body);
        checkKeys(release, ["phase", "message", "revision", "chartVersion", "generation", "appliedTime", "wantsChart"]);
        assert.ok(release.wantsChart === undefined || release.wantsChart === true);
        assert.ok(["Deployed", "Pending", "Failed", "Gone"].includes(release.phase));
        checkMessage(release.message);
        checkShort(release.chartVersion, "chartVersion");
        checkShort(release.appliedTime, "appliedTime");
        if (release.appliedTime) assert.ok(!Number.isNaN(Date.parse(release.appliedTime)));
        assert.ok(release.revision === undefined || count(release.revision));
        assert.ok(release.generation === undefined || count(release.generation));

        const metrics = normaliseClusterMetricsState(body);
        checkKeys(metrics, ["phase", "message"]);
        assert.ok(["Running", "Off", "Failed"].includes(metrics.phase));
        checkMessage(metrics.message);

        const federation = normaliseFederationAnswer(body);
        checkKeys(federation, ["text", "message"]);
        assert.ok(federation.text === undefined || typeof federation.text === "string");
        checkMessage(federation.message);
        checkMessage(normaliseAgentError(body));
        for (const state of [workload, release, metrics, federation]) {
          assert.deepEqual(JSON.parse(JSON.stringify(state)), state);
        }
      }),
      { numRuns: 500 },
    );
  });
});
