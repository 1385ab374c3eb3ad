// Reading PAPRIKA_* variables: the parsing rules the hub's config (config.ts) and the worker's
// (worker-agent/src/agent-config.ts) share, so a variable both read is checked the same way.
// Each helper names the variable in its error; none reads process.env (callers pass the env).

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

/** Node runs a longer timer after 1 ms (a loop period past it would spin): the most any `_S` value may be. */
export const MAX_TIMER_S = (2 ** 31 - 1) / 1000;
/** For ages and retentions that never become a timer: ten years. */
export const MAX_AGE_S = 10 * 365 * 86400;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * A decimal number (no hex, octal or `Infinity`). A `_S` variable is at most MAX_TIMER_S
 * unless `max` says otherwise: every such value may end up as a timer's delay.
 */
export function numberVar(env: Env, name: string, fallback: number, opts: { min?: number; integer?: boolean; max?: number } = {}): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw.trim());
  if (!DECIMAL.test(raw.trim()) || !Number.isFinite(value)) throw new ConfigError(name, `expected a decimal number, got ${JSON.stringify(raw)}`);
  if (opts.integer && !Number.isInteger(value)) throw new ConfigError(name, `expected a whole number, got ${JSON.stringify(raw)}`);
  const min = opts.min ?? 0;
  if (value < min) throw new ConfigError(name, `must be at least ${min}, got ${value}`);
  const max = opts.max ?? (name.endsWith('_S') ? MAX_TIMER_S : undefined);
  if (max !== undefined && value > max) {
    const why = max === MAX_TIMER_S ? ` seconds (about 24.8 days, the longest timer Node keeps)` : max === MAX_AGE_S ? ' seconds (ten years)' : '';
    throw new ConfigError(name, `must be at most ${max}${why}, got ${value}`);
  }
  return value;
}

/**
 * The value of a string of decimal digits, NaN for anything else: `Number()` alone reads '' as
 * 0 (a random port), '0x10' as 16 and ' 8 ' as 8. For flags, counts and ports.
 */
export function digitsValue(raw: string): number {
  return /^\d+$/.test(raw) ? Number(raw) : NaN;
}

/** Digits only (no sign, fraction or exponent), at least 1: counts and sizes. */
export function countVar(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const n = digitsValue(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new ConfigError(name, `expected a whole number of at least 1, got ${JSON.stringify(env[name])}`);
  return n;
}

/** Periods must be positive: a zero-second loop period would spin. */
export function secondsVar(env: Env, name: string, fallback: number, opts: { max?: number } = {}): number {
  const value = numberVar(env, name, fallback, opts);
  if (value <= 0) throw new ConfigError(name, `must be greater than 0 seconds, got ${value}`);
  return value;
}

export function flagVar(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0' || raw.toLowerCase() === 'false') return false;
  if (raw === '1' || raw.toLowerCase() === 'true') return true;
  throw new ConfigError(name, `expected 1 or 0, got ${JSON.stringify(raw)}`);
}

export function stringVar(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
}

export function urlVar(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = stringVar(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `not a valid URL: ${JSON.stringify(raw)}`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `expected a ${protocols.join(' or ')} URL, got ${parsed.protocol}`);
  }
  return raw;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function logLevelVar(env: Env, name: string): string {
  const level = stringVar(env, name) ?? 'info';
  if (!LOG_LEVELS.includes(level)) throw new ConfigError(name, `expected one of ${LOG_LEVELS.join(', ')}`);
  return level;
}
