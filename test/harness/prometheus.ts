// Reading GET /metrics (Prometheus text) in tests and the chaos run.

/** One sample's value, 0 when absent: `metricValue(text, 'paprika_assignments_total', 'via="inline"')`. */
export function metricValue(text: string, name: string, labels = ''): number {
  const escaped = `${name}${labels ? `{${labels}}` : ''}`.replace(/[{}"=,.]/g, (c) => `\\${c}`);
  const m = new RegExp(`^${escaped} ([0-9.e+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** The sum of every sample of `name`, whatever its labels. */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m && m[1] === name) sum += Number(m[3]);
  }
  return sum;
}
