// A hand-driven worker link for tests that need to say exactly what a worker says: enrolled
// like an agent (POST /workers/register with an explicit id), then hello with the fields the
// test chooses and the proof for the hub's challenge; every frame the hub sends kept.
import { WebSocket } from 'ws';
import { linkProof, secretVerifier } from '../../hub-core/src/wire/worker-proof.ts';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { waitFor } from './processes.ts';

export const RAW_CAPS = { max_concurrent: 1, lane_novnc_urls: ['sim://raw/0'], novnc_url: null, version: 't', platform: 'test' };

/** Secrets by worker id: hubs of one test share a database, so an id keeps its secret across them. */
const secrets = new Map<string, string>();

export interface RawOptions {
  token?: string;
  lanIp?: string;
}

const authHeaders = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

/** Enrolls `workerId` (or proves the secret it already has) and returns its secret. */
export async function enrollRaw(hubUrl: string, workerId: string, o: RawOptions = {}): Promise<string> {
  const known = secrets.get(workerId);
  const res = await fetch(`${hubUrl}/workers/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authHeaders(o.token) },
    body: JSON.stringify({ lan_ip: o.lanIp ?? '127.0.0.1', hostname: `raw-${workerId}`, worker_id: workerId, ...(known ? { secret: known } : {}) }),
  });
  const body = (await res.json()) as { secret?: string };
  if (!res.ok || !body.secret) throw new Error(`registering ${workerId} failed: ${res.status} ${JSON.stringify(body)}`);
  secrets.set(workerId, body.secret);
  return body.secret;
}

/** A socket on the link path, open, with the hub's challenge received (hello not sent yet). */
export async function openRawLink(hubUrl: string, workerId: string, o: RawOptions = {}): Promise<{ ws: WebSocket; frames: any[]; nonce: string }> {
  const ws = new WebSocket(`${hubUrl.replace('http', 'ws')}/workers/${workerId}/link`, { headers: authHeaders(o.token) });
  const frames: any[] = [];
  ws.on('message', (m) => frames.push(JSON.parse(String(m))));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const challenge = await waitFor('challenge', async () => frames.find((f) => f.type === 'challenge'), 5000, 5);
  return { ws, frames, nonce: challenge.nonce };
}

/** The hello frame a worker holding `secret` sends for `nonce`; `fields` override any part. */
export function provenHello(workerId: string, secret: string, nonce: string, fields: Record<string, unknown> = {}): string {
  return encode({ type: 'hello', worker_id: workerId, capabilities: RAW_CAPS, disk_pct: 5, proof: linkProof(secretVerifier(secret), nonce, workerId), ...fields } as never);
}

export async function rawLink(hubUrl: string, workerId: string, hello: Record<string, unknown> = {}, o: RawOptions = {}): Promise<{ ws: WebSocket; frames: any[] }> {
  const secret = await enrollRaw(hubUrl, workerId, o);
  const { ws, frames, nonce } = await openRawLink(hubUrl, workerId, o);
  // Like an agent, it names the address it enrolled with (the fleet row keeps it, and a later
  // re-enrollment of the id from that address must match).
  ws.send(provenHello(workerId, secret, nonce, { lan_ip: o.lanIp ?? '127.0.0.1', ...hello }));
  await waitFor('welcome', async () => frames.some((f) => f.type === 'welcome'), 5000, 10);
  return { ws, frames };
}
