// A hand-driven worker link for tests that need to say exactly what a worker says: hello
// with the fields the test chooses, every frame the hub sends kept, resolved on welcome.
import { WebSocket } from 'ws';
import { encode } from '../../hub-core/src/protocol.ts';
import { waitFor } from './processes.ts';

export const RAW_CAPS = { max_concurrent: 1, lane_novnc_urls: ['sim://raw/0'], novnc_url: null, version: 't', platform: 'test' };

export async function rawLink(hubUrl: string, workerId: string, hello: Record<string, unknown> = {}): Promise<{ ws: WebSocket; frames: any[] }> {
  const ws = new WebSocket(`${hubUrl.replace('http', 'ws')}/workers/${workerId}/link`);
  const frames: any[] = [];
  ws.on('message', (m) => frames.push(JSON.parse(String(m))));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(encode({ type: 'hello', worker_id: workerId, capabilities: RAW_CAPS, disk_pct: 5, ...hello } as never));
  await waitFor('welcome', async () => frames.some((f) => f.type === 'welcome'), 5000, 10);
  return { ws, frames };
}
