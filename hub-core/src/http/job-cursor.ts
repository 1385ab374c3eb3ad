// GET /jobs pages: the cursor names the last job of a page (its created_at and id), opaque to
// clients (base64url), so the next page starts exactly after it whatever was inserted since.
export interface JobCursor {
  created_at: Date;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function encodeJobCursor(row: { created_at: Date | string; id: string }): string {
  return Buffer.from(`${new Date(row.created_at).toISOString()}|${row.id}`).toString('base64url');
}

/** The cursor, or undefined when it is not one this hub made (the route answers 400). */
export function decodeJobCursor(text: string): JobCursor | undefined {
  const [iso, id, extra] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  if (extra !== undefined || !iso || !id || !UUID.test(id)) return undefined;
  const created = new Date(iso);
  if (Number.isNaN(created.getTime()) || created.toISOString() !== iso) return undefined;
  return { created_at: created, id };
}
