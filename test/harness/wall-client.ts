// A console's lane-wall socket for tests (GET /admin/wall): opened with a bearer, every message
// kept, `watch` sent as the console sends it.
import { WebSocket } from 'ws';

export interface WallClient {
  ws: WebSocket;
  messages: any[];
  thumbs(workerId?: string, lane?: number): any[];
  watch(tiles: Array<{ worker_id: string; lane: number }>): void;
  closed: Promise<number>;
  close(): void;
}

export async function openWall(hubUrl: string, headers: Record<string, string> = {}, path = '/admin/wall'): Promise<WallClient> {
  const ws = new WebSocket(`${hubUrl.replace(/^http/, 'ws')}${path}`, { headers });
  const messages: any[] = [];
  ws.on('message', (m) => messages.push(JSON.parse(String(m))));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  return {
    ws,
    messages,
    closed,
    thumbs: (workerId, lane) => messages.filter((m) => m.type === 'thumb' && (workerId === undefined || m.worker_id === workerId) && (lane === undefined || m.lane === lane)),
    watch: (tiles) => ws.send(JSON.stringify({ type: 'watch', tiles })),
    close: () => ws.close(),
  };
}

/** The status a WebSocket upgrade answered (101 when it opened). */
export function upgradeStatus(url: string, headers: Record<string, string> = {}, protocols?: string[]): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once('error', () => resolve(0));
  });
}
