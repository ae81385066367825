// A small line chart as SVG (no chart library: the bundle stays small and the CSP needs no inline styles): one line
// per series over the chosen range (a series with one sample shows as a dot), with the largest value and the
// range's ends as labels, and a legend.

const COLORS = ["#0066cc", "#c9190b", "#3e8635", "#f0ab00", "#6753ac", "#009596", "#8f4700", "#151515"];

export interface ChartSeries {
  name: string;
  /** [unix seconds, value] */
  points: [number, number][];
}

export function LineChart({
  title,
  series,
  unit,
  from,
  to,
}: {
  title: string;
  series: ChartSeries[];
  /** The range drawn, in unix seconds (default: the samples' own). */
  from?: number;
  to?: number;
  /** Formats a value for the axis label. */
  unit: (value: number) => string;
}) {
  const width = 640;
  const height = 200;
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) return <p className="vcp-chart-empty">No samples in this range yet.</p>;
  const t0 = from ?? Math.min(...all.map((p) => p[0]));
  const t1 = Math.max(to ?? Math.max(...all.map((p) => p[0])), t0 + 1);
  const max = Math.max(...all.map((p) => p[1]), Number.MIN_VALUE);
  // Ranges over a day name the date too.
  const when = (t: number) =>
    t1 - t0 > 86_400 ? new Date(t * 1000).toLocaleString() : new Date(t * 1000).toLocaleTimeString();
  const x = (t: number) => 40 + ((t - t0) / (t1 - t0)) * (width - 50);
  const y = (v: number) => height - 20 - (v / max) * (height - 40);
  return (
    <figure className="vcp-chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={title} width="100%">
        <line x1={40} y1={height - 20} x2={width - 10} y2={height - 20} stroke="#8a8d90" />
        <line x1={40} y1={10} x2={40} y2={height - 20} stroke="#8a8d90" />
        <text x={0} y={20} fontSize={11}>
          {unit(max)}
        </text>
        <text x={40} y={height - 4} fontSize={11}>
          {when(t0)}
        </text>
        <text x={width - 10} y={height - 4} fontSize={11} textAnchor="end">
          {when(t1)}
        </text>
        {series.map((s, i) => (
          <polyline
            key={s.name}
            fill="none"
            stroke={COLORS[i % COLORS.length]}
            strokeWidth={2}
            points={s.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ")}
          >
            <title>{s.name}</title>
          </polyline>
        ))}
        {series
          .filter((s) => s.points.length === 1)
          .map((s) => (
            <circle
              key={`${s.name}-dot`}
              cx={x(s.points[0][0]).toFixed(1)}
              cy={y(s.points[0][1]).toFixed(1)}
              r={3}
              fill={COLORS[series.indexOf(s) % COLORS.length]}
            />
          ))}
      </svg>
      <ul className="vcp-chart-legend">
        {series.map((s, i) => (
          <li key={s.name}>
            <svg width={12} height={12} aria-hidden="true">
              <rect width={12} height={12} fill={COLORS[i % COLORS.length]} />
            </svg>{" "}
            {s.name}
          </li>
        ))}
      </ul>
    </figure>
  );
}
