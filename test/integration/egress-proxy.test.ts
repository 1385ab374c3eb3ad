// The lane's egress proxy keeps upstream connections alive; a server may close an idle one just
// as the proxy reuses it (Node's own server does after 5 s). That request never reached the
// server: the proxy sends it again on a new connection rather than answer the page 502 (a job
// once "succeeded" on that 502 under load). A request with a body is not sent twice.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressGuard } from '../../worker-agent/src/egress/egress-guard.ts';
import { EgressProxy } from '../../worker-agent/src/egress/egress-proxy.ts';

/** Answers the first request on each connection, then resets the connection on the next one. */
function resettingServer() {
  let requests = 0;
  const server = net.createServer((socket) => {
    let served = 0;
    socket.on('data', (chunk) => {
      if (!chunk.toString().includes('\r\n\r\n')) return;
      requests++;
      if (served++ === 0) socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok`);
      else socket.resetAndDestroy();
    });
    socket.on('error', () => {});
  });
  return { server, requests: () => requests };
}

function viaProxy(proxyPort: number, target: string, method = 'GET', body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: proxyPort, method, path: target, headers: body ? { 'content-length': Buffer.byteLength(body) } : {} }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('egress proxy upstream connections', () => {
  const upstream = resettingServer();
  let target: string;
  const proxy = new EgressProxy(new EgressGuard());

  beforeAll(async () => {
    await new Promise<void>((r) => upstream.server.listen(0, '127.0.0.1', r));
    target = `http://127.0.0.1:${(upstream.server.address() as net.AddressInfo).port}/page`;
    await proxy.start();
  });
  afterAll(async () => {
    await proxy.stop();
    await new Promise((r) => upstream.server.close(r));
  });

  it('a GET whose reused connection is reset is sent again on a new one and answered', async () => {
    expect(await viaProxy(proxy.port, target)).toEqual({ status: 200, body: 'ok' });
    const before = upstream.requests();
    expect(await viaProxy(proxy.port, target)).toEqual({ status: 200, body: 'ok' });
    expect(upstream.requests() - before).toBe(2); // the reset one, then the retry
  });

  it('a POST with a body on a reset connection is answered 502, never sent twice', async () => {
    expect(await viaProxy(proxy.port, target)).toEqual({ status: 200, body: 'ok' }); // leaves a kept-alive socket
    const before = upstream.requests();
    const out = await viaProxy(proxy.port, target, 'POST', 'x=1');
    expect(out.status).toBe(502);
    expect(upstream.requests() - before).toBe(1);
  });
});
