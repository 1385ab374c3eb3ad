import type { z } from 'zod';
import { issuesToDetails, PaprikaError } from '../wire/errors.ts';

/** Parse at the edge: a bad body is a 400 with every problem listed, and changes nothing. */
export function parseOr400<T>(schema: z.ZodType<T>, data: unknown, what: string): T {
  const r = schema.safeParse(data);
  if (!r.success) {
    const details = issuesToDetails(r.error.issues);
    // The first problem in the message too: clients that print only the message (the SDK's Error) still name the field.
    const more = details.length > 1 ? ` (and ${details.length - 1} more in details)` : '';
    throw new PaprikaError('bad_request', details, `Invalid ${what}: ${details[0].path}: ${details[0].message}${more}`);
  }
  return r.data;
}
