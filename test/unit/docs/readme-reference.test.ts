// The README's job spec reference is the schemas' own: rendered from hub-core/src/wire/job-spec.ts
// by scripts/readme, and the README holds exactly that rendering.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JobRequest, MacroStep } from '../../../hub-core/src/wire/job-spec.ts';
import { KIND_NOTES, noteProblems, OP_NOTES, renderJobSpecReference } from '../../../scripts/readme/job-spec-reference.ts';
import { readBlock, renderReadme } from '../../../scripts/readme/readme-blocks.ts';

const README = fs.readFileSync(path.resolve(import.meta.dirname, '../../../README.md'), 'utf8');

describe('README job spec reference', () => {
  it('has a note for every kind, op and field of the schemas, and none for anything else', () => {
    expect(noteProblems()).toEqual([]);
  });

  it('is in the README exactly as rendered from the schemas (npm run docs rewrites it)', () => {
    expect(readBlock(README, 'job-specs')).toBe(renderJobSpecReference());
    expect(renderReadme(README)).toBe(README);
  });

  it('lists every macro op and every field with its limit', () => {
    const block = readBlock(README, 'job-specs')!;
    for (const op of ['goto', 'click', 'type', 'wait_for', 'extract', 'screenshot', 'eval']) expect(block).toContain(`| \`${op}\`: `);
    expect(block).toContain('`{op: "ping"}`');
    expect(block).toMatch(/\| {2}\| `timeout_ms` \| integer \| no \| > 0, ≤ 600,000 \|/);
    expect(block).toMatch(/\| `steps` \| array \| yes \| 1–500 items \|/);
  });

  it('calls a field an http(s) URL only where the schema refuses other URLs', () => {
    type Parsed = { error?: { issues: Array<{ path: PropertyKey[] }> } };
    const urlIssue = (r: Parsed, field: string) => (r.error?.issues ?? []).some((i) => i.path.at(-1) === field);
    const checks: Array<[string, (v: string) => Parsed]> = [];
    for (const [kind, n] of Object.entries(KIND_NOTES)) for (const [field, note] of Object.entries(n.fields)) if (note.type === 'http(s) URL') checks.push([field, (v) => JobRequest.safeParse({ kind, spec: { [field]: v } })]);
    for (const [op, n] of Object.entries(OP_NOTES)) for (const [field, note] of Object.entries(n.fields)) if (note.type === 'http(s) URL') checks.push([field, (v) => MacroStep.safeParse({ op, [field]: v })]);
    expect(checks.length).toBeGreaterThanOrEqual(2);
    for (const [field, parse] of checks) {
      expect(urlIssue(parse('ftp://example.org/'), field)).toBe(true);
      expect(urlIssue(parse('https://example.org/'), field)).toBe(false);
    }
  });
});
