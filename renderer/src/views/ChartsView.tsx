// Throughput, queue, lanes and utilisation over 15 min / 1 h / 24 h, bucketed by the hub.
// Every chart shares the window as its x domain and ticks on whole buckets; each quantity has
// its own scale (lanes and percent never share an axis).
import { useMemo, type ReactElement } from 'react';
import { Area, Bar, BarChart, CartesianGrid, ComposedChart, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useStore } from 'zustand';
import { useActions } from '../components/console-context.ts';
import { bucketText, CHART_RANGES, chartFrame, isEmptyFrame, tickLabel, type ChartFrame } from '../model/chart-data.ts';
import { clockText } from '../model/time-format.ts';
import { chartsStore } from '../stores/charts.ts';

const C = { ok: '#2f855a', fail: '#c53030', queue: '#b7791f', age: '#6b46c1', busy: '#2b6cb0', cap: '#718096', util: '#6b46c1', grid: '#e2e8f0' };
const tick = { fontSize: 11, fill: '#4a5568' };
const MARGIN = { top: 8, right: 12, bottom: 4, left: 4 };
const yLabel = (value: string, side: 'left' | 'right' = 'left') => ({ value, angle: -90, position: side === 'left' ? 'insideLeft' : 'insideRight', style: { fontSize: 11, fill: '#4a5568', textAnchor: 'middle' } }) as const;

function Panel({ title, id, children }: { title: string; id: string; children: ReactElement }) {
  return (
    <div className="panel" data-testid={`chart-${id}`}>
      <h3>{title}</h3>
      <div className="chart">
        <ResponsiveContainer width="100%" height="100%">
          {children}
        </ResponsiveContainer>
      </div>
    </div>
  );
}

function timeAxis(f: ChartFrame) {
  return (
    <XAxis
      dataKey="t"
      type="number"
      scale="time"
      domain={f.domain}
      ticks={f.ticks}
      interval={0}
      allowDataOverflow
      tickFormatter={(t: number) => tickLabel(t, f.tickStepS)}
      tick={tick}
      height={34}
      label={{ value: 'local time', position: 'insideBottom', offset: 0, style: { fontSize: 10, fill: '#718096' } }}
    />
  );
}

export function ChartsView() {
  const actions = useActions();
  const range = useStore(chartsStore, (s) => s.range);
  const history = useStore(chartsStore, (s) => s.history);
  const error = useStore(chartsStore, (s) => s.error);
  const frame = useMemo(() => chartFrame(history), [history]);
  const label = CHART_RANGES.find((r) => r.key === range)?.label ?? range;
  const per = frame ? bucketText(frame.bucketS) : '';
  // A line through one or two samples is invisible: mark the points while they are few.
  const dot = frame && frame.points.filter((p) => p.in_flight !== null).length < 10 ? { r: 2 } : false;
  const tooltipLabel = (t: unknown) => (frame ? `${clockText(Number(t) - (frame.bucketS * 1000) / 2)} + ${per}` : '');

  return (
    <section className="view view-charts" data-testid="charts">
      <div className="toolbar">
        <div className="seg" role="group" aria-label="range">
          {CHART_RANGES.map((r) => (
            <button key={r.key} className={r.key === range ? 'seg-btn on' : 'seg-btn'} onClick={() => actions.setChartRange(r.key)} data-testid={`range-${r.key}`}>
              {r.label}
            </button>
          ))}
        </div>
        {frame && <span className="muted">one bar or point per {per}</span>}
        {error && <span className="inline-error">Could not load the charts: {error}</span>}
      </div>
      {!frame || isEmptyFrame(frame) ? (
        <div className="empty" data-testid="charts-empty">
          {frame ? `Nothing recorded in the last ${label}: no job finished and no hub took a sample.` : error ? 'No chart data.' : 'Loading…'}
        </div>
      ) : (
        <div className="charts">
          <Panel title={`Throughput (jobs finished per ${per})`} id="throughput">
            <BarChart data={frame.points} margin={MARGIN} barCategoryGap="12%">
              <CartesianGrid stroke={C.grid} vertical={false} />
              {timeAxis(frame)}
              <YAxis allowDecimals={false} tick={tick} width={52} label={yLabel('jobs')} />
              <Tooltip labelFormatter={tooltipLabel} />
              <Legend wrapperStyle={{ fontSize: 12 }} />
              <Bar dataKey="succeeded" stackId="a" fill={C.ok} isAnimationActive={false} />
              <Bar dataKey="failed" stackId="a" fill={C.fail} isAnimationActive={false} />
            </BarChart>
          </Panel>
          <Panel title="Queue (deepest per bucket) and the oldest queued job's age" id="queue">
            <ComposedChart data={frame.points} margin={MARGIN}>
              <CartesianGrid stroke={C.grid} vertical={false} />
              {timeAxis(frame)}
              <YAxis yAxisId="jobs" allowDecimals={false} tick={tick} width={52} label={yLabel('queued jobs')} />
              <YAxis yAxisId="age" orientation="right" tick={tick} width={52} label={yLabel('oldest age (s)', 'right')} />
              <Tooltip labelFormatter={tooltipLabel} />
              <Legend wrapperStyle={{ fontSize: 12 }} />
              <Area yAxisId="jobs" dataKey="queued" name="queued" stroke={C.queue} fill={C.queue} fillOpacity={0.25} isAnimationActive={false} connectNulls={false} />
              <Line yAxisId="age" dataKey="oldest_queued_s" name="oldest queued (s)" stroke={C.age} dot={dot} isAnimationActive={false} connectNulls={false} />
            </ComposedChart>
          </Panel>
          <Panel title="Lanes busy and capacity (workers that take work)" id="lanes">
            <LineChart data={frame.points} margin={MARGIN}>
              <CartesianGrid stroke={C.grid} vertical={false} />
              {timeAxis(frame)}
              <YAxis allowDecimals={false} tick={tick} width={52} label={yLabel('lanes')} />
              <Tooltip labelFormatter={tooltipLabel} />
              <Legend wrapperStyle={{ fontSize: 12 }} />
              <Line dataKey="in_flight" name="in flight" stroke={C.busy} dot={dot} isAnimationActive={false} />
              <Line dataKey="capacity" name="capacity" stroke={C.cap} strokeDasharray="4 3" dot={dot} isAnimationActive={false} />
            </LineChart>
          </Panel>
          <Panel title="Utilisation (lanes busy / capacity)" id="utilisation">
            <ComposedChart data={frame.points} margin={MARGIN}>
              <CartesianGrid stroke={C.grid} vertical={false} />
              {timeAxis(frame)}
              <YAxis domain={[0, 100]} ticks={[0, 25, 50, 75, 100]} unit="%" tick={tick} width={52} label={yLabel('% of capacity')} />
              <Tooltip labelFormatter={tooltipLabel} formatter={(v: unknown) => `${String(v)} %`} />
              <Area dataKey="utilisation" name="utilisation" stroke={C.util} fill={C.util} fillOpacity={0.15} isAnimationActive={false} />
            </ComposedChart>
          </Panel>
        </div>
      )}
    </section>
  );
}
