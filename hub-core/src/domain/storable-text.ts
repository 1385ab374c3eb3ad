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
