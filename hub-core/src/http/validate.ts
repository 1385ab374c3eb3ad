import type { z } from 'zod';
import { issuesToDetails, PaprikaError } from '../wire/errors.ts';

/** Parse at the edge: a bad body is a 400 with every problem listed, and changes nothing. */
export function parseOr400<T>(schema: z.ZodType<T>, data: unknown, what: string): T {
  const r = schema.safeParse(data);
  if (!r.success) throw new PaprikaError('bad_request', issuesToDetails(r.error.issues), `Invalid ${what}`);
  return r.data;
}
