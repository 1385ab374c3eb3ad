// Text Postgres cannot store: `jsonb` and `text` refuse U+0000, and a lone UTF-16 surrogate
// (valid in a JS string, not in UTF-8) fails the insert too. A spec carrying either could only
// ever be answered "database unavailable" — and retried forever — so it is refused up front.

export interface UnstorableText {
  /** Where, as a dotted path (`spec.steps.2.text`); object keys are checked as well as values. */
  path: string;
  reason: 'NUL character' | 'lone surrogate';
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function textProblem(s: string): UnstorableText['reason'] | undefined {
  if (s.includes('\u0000')) return 'NUL character';
  if (LONE_SURROGATE.test(s)) return 'lone surrogate';
  return undefined;
}

export function findUnstorableText(value: unknown, path: string): UnstorableText | undefined {
  if (typeof value === 'string') {
    const reason = textProblem(value);
    return reason ? { path, reason } : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], `${path}.${i}`);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const keyReason = textProblem(k);
      if (keyReason) return { path: `${path}.${JSON.stringify(k)}`, reason: keyReason };
      const found = findUnstorableText(v, `${path}.${k}`);
      if (found) return found;
    }
  }
  return undefined;
}

const UNSTORABLE_ALL = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A worker's result is not refused like a spec: the job ran and succeeded, and refusing the
 * result lost it (the job ended `timeout` while the worker re-sent it forever). Each NUL and
 * lone surrogate becomes U+FFFD, in keys and values; `replaced` counts them and `first` says
 * where the first was, for the log.
 */
export function storableCopy<T>(value: T, path: string): { value: T; replaced: number; first?: UnstorableText } {
  const first = findUnstorableText(value, path);
  if (!first) return { value, replaced: 0 };
  let replaced = 0;
  const fix = (s: string) =>
    s.replace(UNSTORABLE_ALL, () => {
      replaced++;
      return '\uFFFD';
    });
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return fix(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [fix(k), walk(x)]));
    return v;
  };
  return { value: walk(value) as T, replaced, first };
}
