// A tiny line of the last samples (0–100 %), with the latest value beside it.
import { memo } from 'react';

export const Sparkline = memo(function Sparkline({ values, label, width = 160, height = 28 }: { values: Array<number | null>; label: string; width?: number; height?: number }) {
  const pts: string[] = [];
  const n = values.length;
  values.forEach((v, i) => {
    if (v === null) return;
    const x = n <= 1 ? width : (i / (n - 1)) * width;
    const y = height - (Math.max(0, Math.min(100, v)) / 100) * (height - 2) - 1;
    pts.push(`${x.toFixed(1)},${y.toFixed(1)}`);
  });
  const last = [...values].reverse().find((v) => v !== null);
  return (
    <div className="spark" data-testid={`spark-${label}`}>
      <span className="spark-label">{label}</span>
      <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${label} over the last ${n} samples, 0 to 100 %`}>
        <rect x="0" y="0" width={width} height={height} className="spark-bg" />
        {pts.length > 0 && <polyline points={pts.join(' ')} className="spark-line" />}
      </svg>
      <span className="num spark-value">{last === undefined || last === null ? '—' : `${Math.round(last)}%`}</span>
    </div>
  );
});
