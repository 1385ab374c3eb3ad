// The contract between the hub, its workers and its clients: what `paprika/wire` exports.
// Everything here is pure and depends on zod and node: built-ins only (never on the rest of
// hub-core), so the worker agent and the console can import it without the hub.
export * from './backoff.ts';
export * from './env.ts';
export * from './errors.ts';
export * from './job-spec.ts';
export * from './json.ts';
export * from './files.ts';
export * from './process-holder.ts';
export * from './protocol.ts';
export * from './random.ts';
export * from './turn-writes.ts';
export * from './url-policy.ts';
export * from './version.ts';
export * from './view-token.ts';
export * from './wall.ts';
export * from './work-kinds.ts';
export * from './worker-proof.ts';
