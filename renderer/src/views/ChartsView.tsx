// The last hour from /admin/stats: throughput per minute, queue depth, fleet utilisation.
import { useMemo, type ReactElement } from 'react';
import { Area, AreaChart, Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useStore } from 'zustand';
import { seriesPoints, throughputPoints, timeTick } from '../model/chart-data.ts';
import { clockText } from '../model/time-format.ts';
import { jobsStore } from '../stores/jobs.ts';

const C = { ok: '#2f855a', fail: '#c53030', queue: '#b7791f', busy: '#2b6cb0', cap: '#718096', grid: '#e2e8f0' };
const axis = { fontSize: 11, fill: '#4a5568' };
const tooltipLabel = (t: unknown) => clockText(Number(t));

function Panel({ title, children, empty }: { title: string; children: ReactElement; empty: boolean }) {
  return (
    <div className="panel">
      <h3>{title}</h3>
      <div className="chart">
        {empty ? (
          <div className="empty">No data yet.</div>
        ) : (
          <ResponsiveContainer width="100%" height="100%">
            {children}
          </ResponsiveContainer>
        )}
      </div>
    </div>
  );
}

export function ChartsView() {
  const stats = useStore(jobsStore, (s) => s.stats);
  // Re-derived per stats response (every few seconds), not per render.
  const { tp, series } = useMemo(() => {
    const now = stats ? Date.parse(stats.as_of) || Date.now() : Date.now();
    return { tp: throughputPoints(stats, now), series: seriesPoints(stats, now) };
  }, [stats]);

  return (
    <section className="view charts" data-testid="charts">
      <Panel title="Throughput (jobs finished per minute)" empty={tp.length === 0}>
        <BarChart data={tp} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid stroke={C.grid} vertical={false} />
          <XAxis dataKey="t" type="number" scale="time" domain={['dataMin', 'dataMax']} tickFormatter={timeTick} tick={axis} />
          <YAxis allowDecimals={false} tick={axis} width={40} />
          <Tooltip labelFormatter={tooltipLabel} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="succeeded" stackId="a" fill={C.ok} isAnimationActive={false} />
          <Bar dataKey="failed" stackId="a" fill={C.fail} isAnimationActive={false} />
        </BarChart>
      </Panel>
      <Panel title="Queue depth (queued jobs)" empty={series.length === 0}>
        <AreaChart data={series} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid stroke={C.grid} vertical={false} />
          <XAxis dataKey="t" type="number" scale="time" domain={['dataMin', 'dataMax']} tickFormatter={timeTick} tick={axis} />
          <YAxis allowDecimals={false} tick={axis} width={40} />
          <Tooltip labelFormatter={tooltipLabel} />
          <Area dataKey="queued" stroke={C.queue} fill={C.queue} fillOpacity={0.25} isAnimationActive={false} />
        </AreaChart>
      </Panel>
      <Panel title="Fleet utilisation (lanes busy / capacity)" empty={series.length === 0}>
        <LineChart data={series} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid stroke={C.grid} vertical={false} />
          <XAxis dataKey="t" type="number" scale="time" domain={['dataMin', 'dataMax']} tickFormatter={timeTick} tick={axis} />
          <YAxis yAxisId="lanes" allowDecimals={false} tick={axis} width={40} />
          <YAxis yAxisId="pct" orientation="right" domain={[0, 100]} unit="%" tick={axis} width={44} />
          <Tooltip labelFormatter={tooltipLabel} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Line yAxisId="lanes" dataKey="in_flight" name="in flight" stroke={C.busy} dot={false} isAnimationActive={false} />
          <Line yAxisId="lanes" dataKey="capacity" stroke={C.cap} strokeDasharray="4 3" dot={false} isAnimationActive={false} />
          <Line yAxisId="pct" dataKey="utilisation" name="utilisation %" stroke="#6b46c1" dot={false} isAnimationActive={false} />
        </LineChart>
      </Panel>
    </section>
  );
}
