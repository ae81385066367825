// Samples as Prometheus's text exposition format (0.0.4), as parseExposition() reads them: each metric name's
// samples in one group under a `# TYPE <name> untyped` line (what Prometheus's /federate writes), in the order of
// their names' first samples; label values escaped (\\, \" and \n); value and timestamp as read.

import type { ExpositionSample } from "./parse-exposition.ts";

const escapeValue = (value: string) => value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");

function sampleLine(sample: ExpositionSample): string {
  const labels = sample.labels.map(([name, value]) => `${name}="${escapeValue(value)}"`).join(",");
  const timestamp = sample.timestamp === undefined ? "" : ` ${sample.timestamp}`;
  return `${sample.name}${labels ? `{${labels}}` : ""} ${sample.value}${timestamp}\n`;
}

/** The samples as exposition text (the empty string for none). */
export function formatExposition(samples: readonly ExpositionSample[]): string {
  const families = new Map<string, string[]>();
  for (const sample of samples) {
    const lines = families.get(sample.name);
    if (lines) lines.push(sampleLine(sample));
    else families.set(sample.name, [sampleLine(sample)]);
  }
  let text = "";
  for (const [name, lines] of families) text += `# TYPE ${name} untyped\n${lines.join("")}`;
  return text;
}
