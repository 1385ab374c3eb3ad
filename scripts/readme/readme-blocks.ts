// Generated blocks in README.md: `<!-- NAME:start -->` … `<!-- NAME:end -->`, rewritten by
// `npm run docs` and compared by the docs tests.
import { renderJobSpecReference } from './job-spec-reference.ts';

/** Every generated block: its marker name and what renders it. */
export const README_BLOCKS: Record<string, () => string> = {
  'job-specs': renderJobSpecReference,
};

const start = (name: string) => `<!-- ${name}:start -->`;
const end = (name: string) => `<!-- ${name}:end -->`;

/** The text between a block's markers (without the newlines next to them), or undefined. */
export function readBlock(text: string, name: string): string | undefined {
  const a = text.indexOf(start(name));
  const b = text.indexOf(end(name));
  if (a < 0 || b < a) return undefined;
  return text.slice(a + start(name).length, b).replace(/^\n/, '').replace(/\n$/, '');
}

export function replaceBlock(text: string, name: string, content: string): string {
  const a = text.indexOf(start(name));
  const b = text.indexOf(end(name));
  if (a < 0 || b < a) throw new Error(`README has no ${start(name)} … ${end(name)} block`);
  return `${text.slice(0, a + start(name).length)}\n${content}\n${text.slice(b)}`;
}

/** The README with every generated block rendered anew. */
export function renderReadme(text: string): string {
  return Object.entries(README_BLOCKS).reduce((t, [name, render]) => replaceBlock(t, name, render()), text);
}
