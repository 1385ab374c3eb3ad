// Running the TypeScript sources (tests, bench, chaos, `PAPRIKA_FROM_SOURCE=1 paprika`): tsx
// compiles them, and `paprika/wire` (the worker's one door into hub-core, package.json
// "exports") resolves to its TypeScript under the `paprika-source` condition instead of dist/.
import { register as registerHooks } from 'node:module';
import { register } from 'tsx/esm/api';

const SOURCE_CONDITION = "export async function resolve(specifier, context, next) { return next(specifier, { ...context, conditions: [...context.conditions, 'paprika-source'] }); }";

export function runFromSource() {
  register();
  registerHooks(`data:text/javascript,${encodeURIComponent(SOURCE_CONDITION)}`);
}
