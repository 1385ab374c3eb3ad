// The lane wall's WebSocket (GET /admin/wall, and GET /internal/wall between hubs): the console
// says which tiles it shows, the hub sends each tile's latest thumbnail. README § Live view.
import { z } from 'zod';
import { issuesToDetails } from './errors.ts';
import { THUMB_MAX_CHARS } from './protocol.ts';

/** Largest message a wall client may send; a bigger one closes the socket (1009). */
export const WALL_MAX_MESSAGE_BYTES = 1024 * 1024;
/** Most tiles one `watch` may name. */
export const WALL_MAX_TILES = 1000;
/**
 * A peer hub's `watch` on GET /internal/wall carries the union of its consoles' remote tiles
 * (up to WALL_MAX_TILES each), so it may name more, in a larger message.
 */
export const WALL_PEER_MAX_TILES = 20_000;
export const WALL_PEER_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export const WallTile = z.strictObject({ worker_id: z.string().min(1).max(200), lane: z.number().int().min(0).max(1023) });
export type WallTile = z.infer<typeof WallTile>;

/** client → hub: replace-set; `[]` watches nothing. */
export const WallClientMessage = z.discriminatedUnion('type', [z.strictObject({ type: z.literal('watch'), tiles: z.array(WallTile).max(WALL_PEER_MAX_TILES) })]);
export type WallClientMessage = z.infer<typeof WallClientMessage>;

/** hub → client: a tile's latest frame (`jpeg` base64) or `idle` (the lane shows no page). */
export const WallThumbJson = z.strictObject({ type: z.literal('thumb'), worker_id: z.string(), lane: z.number().int().min(0), at: z.number().int(), jpeg: z.string().max(THUMB_MAX_CHARS).optional(), idle: z.literal(true).optional() });
export type WallThumbJson = z.infer<typeof WallThumbJson>;
export const WallErrorJson = z.strictObject({ type: z.literal('error'), code: z.string(), message: z.string() });
export type WallErrorJson = z.infer<typeof WallErrorJson>;
export const WallServerMessage = z.discriminatedUnion('type', [WallThumbJson, WallErrorJson]);
export type WallServerMessage = z.infer<typeof WallServerMessage>;

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string; details: unknown };

function parseJson<T>(schema: z.ZodType<T>, text: string): Parsed<T> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, error: 'message is not valid JSON', details: null };
  }
  const r = schema.safeParse(data);
  return r.success ? { ok: true, value: r.data } : { ok: false, error: 'invalid wall message', details: issuesToDetails(r.error.issues) };
}

/** A `watch` of at most `maxTiles` (WALL_MAX_TILES from a console, WALL_PEER_MAX_TILES from a peer hub). */
export function parseWallClientMessage(text: string, maxTiles: number = WALL_MAX_TILES): Parsed<WallClientMessage> {
  const parsed = parseJson(WallClientMessage, text);
  if (parsed.ok && parsed.value.tiles.length > maxTiles) return { ok: false, error: 'invalid wall message', details: [{ path: 'tiles', message: `at most ${maxTiles} tiles` }] };
  return parsed;
}
export const parseWallServerMessage = (text: string): Parsed<WallServerMessage> => parseJson(WallServerMessage, text);
