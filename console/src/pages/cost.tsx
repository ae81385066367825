// Cost: usage per project and virtual cluster over a chosen range (CPU, memory, storage, API requests, synced
// objects), drawn as charts, with the estimated cost from the Config's per-unit prices. The figures are the
// platform's /platform/cost report, which names the PromQL behind each (shown under the table).

import { Alert, FormSelect, FormSelectOption, PageSection, Title } from "@patternfly/react-core";
import { useEffect, useState } from "react";
import { ErrorAlert, Loading } from "../components/common.tsx";
import { LineChart } from "../components/line-chart.tsx";
import { SimpleTable } from "../components/simple-table.tsx";
import { apiRequest } from "../lib/api.ts";

interface CostRow {
  project: string;
  virtualcluster: string;
  cpuCoreHours: number;
  memoryGiBHours: number;
  storageGiBMonths: number;
  apiRequests: number;
  syncedObjects: number;
  cost: number;
  /** False on a cluster whose cost estimator is off (costEstimator.replicas 0). */
  estimated: boolean;
}

interface CostReport {
  start: string;
  end: string;
  prices: {
    currency: string;
    cpuCoreHour: number;
    memoryGiBHour: number;
    storageGiBMonth: number;
    millionApiRequests: number;
  };
  rows: CostRow[];
  total: number;
  queries: Record<string, string>;
  series: Record<"cpu" | "memory", { project: string; virtualcluster: string; points: [number, number][] }[]>;
}

const RANGES: [string, number][] = [
  ["Last 15 minutes", 15 * 60],
  ["Last hour", 3600],
  ["Last 6 hours", 6 * 3600],
  ["Last 24 hours", 86_400],
  ["Last 7 days", 7 * 86_400],
  ["Last 30 days", 30 * 86_400],
];

const who = (row: { project: string; virtualcluster: string }) =>
  row.virtualcluster ? `${row.project}/${row.virtualcluster}` : row.project || "platform and agents";
const fixed = (value: number, digits = 4) => value.toFixed(digits);

export default function CostPage() {
  const [range, setRange] = useState(3600);
  const [report, setReport] = useState<CostReport>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    const end = new Date();
    const start = new Date(end.getTime() - range * 1000);
    setReport(undefined);
    setError(undefined);
    apiRequest<CostReport>(`/platform/cost?start=${start.toISOString()}&end=${end.toISOString()}`).then(
      setReport,
      setError,
    );
  }, [range]);

  const money = (value: number) => `${value.toFixed(4)} ${report?.prices.currency ?? ""}`;
  return (
    <PageSection>
      <Title headingLevel="h1">Cost</Title>
      <p>
        Usage per project and virtual cluster, and what it would cost at the prices of the platform Config
        (costControl.prices).
      </p>
      <FormSelect
        value={String(range)}
        onChange={(_event, value) => setRange(Number(value))}
        aria-label="Range"
        className="vcp-cost-range"
      >
        {RANGES.map(([label, seconds]) => (
          <FormSelectOption key={seconds} value={String(seconds)} label={label} />
        ))}
      </FormSelect>
      {error ? <ErrorAlert error={error} title="The cost report is not available" /> : null}
      {!report && !error ? <Loading what="the cost report" /> : null}
      {report && (
        <div data-testid="cost-report" data-start={report.start} data-end={report.end} data-range={range}>
          <Alert
            isInline
            variant="info"
            title={`Estimated cost: ${money(report.total)}`}
            className="vcp-cost-total"
            data-testid="cost-total"
          >
            From {new Date(report.start).toLocaleString()} to {new Date(report.end).toLocaleString()}. Prices: CPU{" "}
            {report.prices.cpuCoreHour} per core-hour, memory {report.prices.memoryGiBHour} per GiB-hour, storage{" "}
            {report.prices.storageGiBMonth} per GiB-month, {report.prices.millionApiRequests} per million API requests.
          </Alert>
          <SimpleTable
            label="Usage and cost"
            columns={[
              "Project / virtual cluster",
              "CPU core-hours",
              "Memory GiB-hours",
              "Storage GiB-months",
              "API requests",
              "Synced objects",
              "Estimated cost",
            ]}
            rows={report.rows}
            rowKey={who}
            cells={(row) => [
              who(row),
              fixed(row.cpuCoreHours),
              fixed(row.memoryGiBHours),
              fixed(row.storageGiBMonths, 6),
              String(row.apiRequests),
              String(row.syncedObjects),
              row.estimated === false ? "not estimated (costEstimator.replicas 0)" : money(row.cost),
            ]}
          />
          <LineChart
            title="CPU cores"
            unit={(v) => `${v.toFixed(2)} cores`}
            from={Date.parse(report.start) / 1000}
            to={Date.parse(report.end) / 1000}
            series={report.series.cpu.map((s) => ({ name: who(s), points: s.points }))}
          />
          <LineChart
            title="Resident memory"
            unit={(v) => `${(v / 1024 ** 3).toFixed(2)} GiB`}
            from={Date.parse(report.start) / 1000}
            to={Date.parse(report.end) / 1000}
            series={report.series.memory.map((s) => ({ name: who(s), points: s.points }))}
          />
          <details>
            <summary>PromQL behind these figures</summary>
            <ul>
              {Object.entries(report.queries).map(([name, query]) => (
                <li key={name}>
                  {name}: <code>{query}</code>
                </li>
              ))}
            </ul>
          </details>
        </div>
      )}
    </PageSection>
  );
}
