// The README's job spec and macro step reference, rendered from the zod schemas in
// hub-core/src/wire/job-spec.ts: field names, types, required or not and limits come from
// the schemas (through their JSON Schema); what a field means and the default the worker
// applies come from the notes below. A field without a note, or a note without a field, is an
// error, so the reference cannot drift from the schemas (test/unit/docs/readme-reference.test.ts).
import { z } from 'zod';
import { JobRequest, MacroStep, SessionCommand } from '../../hub-core/src/wire/job-spec.ts';

export interface FieldNote {
  meaning: string;
  /** What the worker does when the field is left out. */
  default?: string;
  /** Shown instead of the schema's type where a refinement narrows it (JSON Schema cannot say). */
  type?: string;
}

const TIMEOUT_S: FieldNote = { meaning: 'running deadline of this job, seconds (fractions allowed)', default: '`PAPRIKA_JOB_TIMEOUT_S` (180)' };
const HTTP_URL = 'http(s) URL';
const WAIT_UNTIL: FieldNote = { meaning: 'when the navigation counts as done (puppeteer `waitUntil`)', default: '`load`' };

/** Per job kind: what the kind does, then a note per spec field. */
export const KIND_NOTES: Record<string, { does: string; fields: Record<string, FieldNote> }> = {
  fetch: {
    does: 'load one URL; result `{status_code, final_url, title, html_bytes}`',
    fields: {
      url: { meaning: 'page to load', type: HTTP_URL },
      wait_until: WAIT_UNTIL,
      screenshot: { meaning: '`true` stores a PNG of the viewport as asset `screenshot.png`', default: '`false`' },
      timeout_s: TIMEOUT_S,
    },
  },
  macro: {
    does: 'run the steps in order on one page; the first failing step fails the job (`step N (op): …`); result `{values, steps}`',
    fields: {
      steps: { meaning: 'the steps, each one of the ops below' },
      timeout_s: TIMEOUT_S,
    },
  },
  rerun: {
    does: "run an earlier job's kind and spec again as a new job (an unknown `job_id` fails it)",
    fields: {
      job_id: { meaning: 'the earlier job' },
      timeout_s: { meaning: "running deadline of the new job, seconds", default: "the earlier spec's `timeout_s`, else `PAPRIKA_JOB_TIMEOUT_S`" },
    },
  },
  sleep: {
    does: 'wait, without a browser (simulated lanes run it too)',
    fields: {
      ms: { meaning: 'how long, milliseconds' },
      timeout_s: TIMEOUT_S,
    },
  },
};

/** Per macro op (and session-only op): what it does, then a note per field. */
export const OP_NOTES: Record<string, { does: string; fields: Record<string, FieldNote> }> = {
  goto: {
    does: 'navigate the page',
    fields: { url: { meaning: 'page to open', type: HTTP_URL }, wait_until: WAIT_UNTIL },
  },
  click: {
    does: 'click an element once it is attached, visible and stable',
    fields: { selector: { meaning: 'CSS selector of the element' } },
  },
  type: {
    does: 'type text into an element, key by key',
    fields: { selector: { meaning: 'CSS selector of the input' }, text: { meaning: 'the text to type' } },
  },
  wait_for: {
    does: 'wait until an element matches',
    fields: { selector: { meaning: 'CSS selector to wait for' }, timeout_ms: { meaning: 'give up after this long, milliseconds (never past the job deadline)', default: 'the time left until the job deadline' } },
  },
  extract: {
    does: 'read a value from the first matching element into `result.values[name]`; no match fails the step',
    fields: {
      selector: { meaning: 'CSS selector of the element' },
      name: { meaning: 'key in `result.values`' },
      attr: { meaning: 'read this attribute (wins over `property`); a missing attribute reads `null`' },
      property: { meaning: 'read this DOM property', default: '`textContent`' },
    },
  },
  screenshot: {
    does: 'store a PNG of the page as an asset',
    fields: { name: { meaning: 'asset name, stored as `NAME.png`', default: '`screenshot-N` (N: the step number, from 1)' }, full_page: { meaning: '`true` captures the whole page, not only the viewport (at most 16 megapixels, e.g. 1280 x 12,500 px; a larger page fails the step naming its size: Chrome encodes the PNG on its browser process, which answers nothing else meanwhile)', default: '`false`' } },
  },
  eval: {
    does: 'evaluate a JavaScript expression in the page (statements allowed, a promise awaited); its value is what `JSON.stringify` makes of it there (`undefined` → `null`, a `Date` → its ISO text); a value it cannot write (a cycle, nesting too deep) fails the step, naming why',
    fields: { expression: { meaning: 'the expression' }, name: { meaning: 'key in `result.values` for the value', default: 'value not kept' } },
  },
  ping: {
    does: 'session only: answers `{pong: true, worker_id, lane, hub_id}` without touching the page',
    fields: {},
  },
};

interface JsonField {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  maxItems?: number;
}
interface JsonObject {
  properties: Record<string, JsonField>;
  required?: string[];
}
interface JsonUnion {
  oneOf?: Array<JsonObject | JsonUnion>;
  anyOf?: Array<JsonObject | JsonUnion>;
}

const n = (v: number) => v.toLocaleString('en-US');

function jsonSchema(schema: z.ZodType): JsonUnion & Partial<JsonObject> {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonUnion & Partial<JsonObject>;
}

/** The objects of a (nested) union, in order. */
function members(s: JsonObject | JsonUnion): JsonObject[] {
  const u = s as JsonUnion;
  const inner = u.oneOf ?? u.anyOf;
  return inner ? inner.flatMap(members) : [s as JsonObject];
}

function typeOf(f: JsonField): string {
  if (f.enum) return `one of ${f.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  if (f.format === 'uuid') return 'UUID';
  if (f.type === 'integer') return 'integer';
  if (f.type === 'array') return 'array';
  return f.type ?? 'any';
}

function limitsOf(f: JsonField): string {
  const out: string[] = [];
  const range = (lo: number | undefined, hi: number | undefined, unit: string) => {
    if (lo !== undefined && lo > 0 && hi !== undefined) out.push(`${n(lo)}–${n(hi)} ${unit}`);
    else if (hi !== undefined) out.push(`≤ ${n(hi)} ${unit}`);
    else if (lo !== undefined && lo > 0) out.push(`≥ ${n(lo)} ${unit}`);
  };
  range(f.minLength, f.maxLength, 'chars');
  range(f.minItems, f.maxItems, 'items');
  if (f.minimum !== undefined && f.maximum !== undefined) out.push(`${n(f.minimum)}–${n(f.maximum)}`);
  else {
    if (f.exclusiveMinimum !== undefined) out.push(`> ${n(f.exclusiveMinimum)}`);
    if (f.minimum !== undefined) out.push(`≥ ${n(f.minimum)}`);
    if (f.maximum !== undefined) out.push(`≤ ${n(f.maximum)}`);
  }
  if (f.pattern && !f.format) out.push(`\`${f.pattern}\``);
  return out.join(', ') || '—';
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

/** Problems with the notes: fields without a note and notes without a field. Empty: in step. */
export function noteProblems(): string[] {
  const problems: string[] = [];
  const check = (where: string, fields: string[], notes: Record<string, { fields: Record<string, FieldNote> }>, key: string) => {
    const note = notes[key];
    if (!note) return void problems.push(`${where}: no note for ${key}`);
    for (const f of fields) if (!note.fields[f]) problems.push(`${where} ${key}: field ${f} has no note`);
    for (const f of Object.keys(note.fields)) if (!fields.includes(f)) problems.push(`${where} ${key}: note for ${f}, which the schema does not have`);
  };
  const kinds = new Set<string>();
  for (const m of members(jsonSchema(JobRequest))) {
    const kind = String(m.properties.kind.const);
    kinds.add(kind);
    check('kind', Object.keys((m.properties.spec as unknown as JsonObject).properties), KIND_NOTES, kind);
  }
  for (const k of Object.keys(KIND_NOTES)) if (!kinds.has(k)) problems.push(`kind ${k}: note for a kind the schema does not have`);
  const ops = new Set<string>();
  for (const m of members(jsonSchema(SessionCommand))) {
    const op = String(m.properties.op.const);
    ops.add(op);
    check('op', Object.keys(m.properties).filter((f) => f !== 'op'), OP_NOTES, op);
  }
  for (const o of Object.keys(OP_NOTES)) if (!ops.has(o)) problems.push(`op ${o}: note for an op the schema does not have`);
  return problems;
}

function fieldRow(lead: string[], name: string, f: JsonField, required: boolean, note: FieldNote): string {
  return `| ${[...lead, `\`${name}\``, cell(note.type ?? typeOf(f)), required ? 'yes' : 'no', cell(limitsOf(f)), cell(note.default ?? '—'), cell(note.meaning)].join(' | ')} |`;
}

/** The Markdown that goes between the README's `job-specs` markers. */
export function renderJobSpecReference(): string {
  const problems = noteProblems();
  if (problems.length > 0) throw new Error(`job spec notes out of step with the schemas:\n${problems.join('\n')}`);
  const lines: string[] = [];
  lines.push('Every job is `{kind, spec}`; a spec with a field not listed here is refused (400).', '');
  lines.push('| kind | field | type | required | limits | default | meaning |', '|---|---|---|---|---|---|---|');
  for (const m of members(jsonSchema(JobRequest))) {
    const kind = String(m.properties.kind.const);
    const spec = m.properties.spec as unknown as JsonObject;
    const notes = KIND_NOTES[kind];
    let first = true;
    for (const [name, f] of Object.entries(spec.properties)) {
      lines.push(fieldRow([first ? `\`${kind}\`: ${notes.does}` : ''], name, f, spec.required?.includes(name) ?? false, notes.fields[name]));
      first = false;
    }
  }
  lines.push('', 'Macro steps (`macro` `spec.steps[]`), each `{op, …}`:', '');
  lines.push('| op | field | type | required | limits | default | meaning |', '|---|---|---|---|---|---|---|');
  const macroOps = new Set<string>();
  for (const m of members(jsonSchema(MacroStep))) {
    const op = String(m.properties.op.const);
    macroOps.add(op);
    const notes = OP_NOTES[op];
    const fields = Object.entries(m.properties).filter(([name]) => name !== 'op');
    if (fields.length === 0) lines.push(`| \`${op}\`: ${cell(notes.does)} | — | | | | | |`);
    let first = true;
    for (const [name, f] of fields) {
      lines.push(fieldRow([first ? `\`${op}\`: ${cell(notes.does)}` : ''], name, f, m.required?.includes(name) ?? false, notes.fields[name]));
      first = false;
    }
  }
  const sessionOnly = members(jsonSchema(SessionCommand))
    .map((m) => String(m.properties.op.const))
    .filter((op) => !macroOps.has(op));
  lines.push(
    '',
    `Session commands (\`POST /sessions/:id/commands\`) take one step of the same shape, run on the session's page (kept open between commands), plus ${sessionOnly
      .map((op) => `\`{op: "${op}"}\` (${OP_NOTES[op].does.replace(/^session only: /, '')})`)
      .join(', ')}. Each answers with what its step made: \`goto\` → \`{status_code, final_url}\`; \`eval\` and \`extract\` → \`{name, value}\` (\`{value}\` without a name); \`screenshot\` → \`{asset: {name, content_type, data_base64}}\`, the PNG inline (a session keeps no assets); \`click\`, \`type\` and \`wait_for\` → \`{ok: true}\`. A reply over \`PAPRIKA_MAX_RESULT_BYTES\` is a 400 \`result too large\`.`,
  );
  return lines.join('\n');
}
