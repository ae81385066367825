// Counters and histograms for per-request metrics, exported through a prom-client Registry. prom-client hashes
// and validates the label object on every observation (its `labels()` children too); here a caller binds a
// series once per label set and an observation is a few additions.

import type { Metric, Registry } from "prom-client";

type Labels = Record<string, string>;

interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** What prom-client's Registry reads from a metric. */
interface Exported {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }>;
  reset(): void;
}

function labelsOf(names: readonly string[], values: readonly string[]): Labels {
  if (values.length !== names.length) throw new Error(`expected ${names.length} label values, got ${values.length}`);
  const labels: Labels = {};
  for (let i = 0; i < names.length; i++) labels[names[i]] = values[i];
  return labels;
}

export class CounterSeries {
  readonly labels: Labels;
  value = 0;

  constructor(labels: Labels) {
    this.labels = labels;
  }

  inc(by = 1): void {
    this.value += by;
  }
}

export class HistogramSeries {
  readonly labels: Labels;
  readonly counts: number[];
  sum = 0;
  count = 0;
  private readonly bounds: readonly number[];

  constructor(labels: Labels, bounds: readonly number[]) {
    this.labels = labels;
    this.bounds = bounds;
    this.counts = new Array<number>(bounds.length).fill(0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    this.sum += value;
    this.count++;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        this.counts[i]++;
        return;
      }
    }
  }
}

abstract class LabeledMetric<S extends CounterSeries | HistogramSeries> implements Exported {
  readonly name: string;
  readonly help: string;
  abstract readonly type: "counter" | "histogram";
  readonly aggregator = "sum" as const;
  readonly labelNames: readonly string[];
  protected series = new Map<string, S>();

  constructor(options: { name: string; help: string; labelNames: readonly string[]; registry: Registry }) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    options.registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values (in labelNames order); bind it once and keep it. */
  labels(...values: string[]): S {
    const id = values.join("\u0000");
    let series = this.series.get(id);
    if (!series) {
      series = this.create(labelsOf(this.labelNames, values));
      this.series.set(id, series);
    }
    return series;
  }

  reset(): void {
    this.series = new Map();
  }

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() };
  }

  protected abstract create(labels: Labels): S;
  protected abstract values(): MetricValue[];
}

export class SeriesCounter extends LabeledMetric<CounterSeries> {
  readonly type = "counter" as const;

  protected create(labels: Labels): CounterSeries {
    return new CounterSeries(labels);
  }

  protected values(): MetricValue[] {
    return [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value }));
  }
}

export class SeriesHistogram extends LabeledMetric<HistogramSeries> {
  readonly type = "histogram" as const;
  readonly buckets: readonly number[];

  constructor(options: {
    name: string;
    help: string;
    labelNames: readonly string[];
    buckets: readonly number[];
    registry: Registry;
  }) {
    super(options);
    this.buckets = [...options.buckets].sort((a, b) => a - b);
  }

  protected create(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.buckets);
  }

  protected values(): MetricValue[] {
    const out: MetricValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += s.counts[i];
        out.push({ labels: { ...s.labels, le: String(this.buckets[i]) }, value: cumulative, metricName: bucket });
      }
      out.push({ labels: { ...s.labels, le: "+Inf" }, value: s.count, metricName: bucket });
      out.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      out.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return out;
  }
}
