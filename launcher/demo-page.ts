// The page the demo's example jobs open. Jobs may not reach the hub's own port (the egress
// policy denies it), and the demo must work offline, so the demo serves a page of its own on
// another loopback port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Paprika demo page</title>
<style>body{font-family:sans-serif;margin:3em;background:#fff8f0}h1{color:#c0392b}</style></head>
<body><h1>Hello from a Paprika lane</h1>
<p id="greeting">This page is served by <code>paprika demo</code> on loopback.</p>
<label>Your name <input id="name" autocomplete="off"></label>
<p>Typed: <span id="typed"></span></p>
<script>document.getElementById('name').addEventListener('input', (e) => { document.getElementById('typed').textContent = e.target.value; });</script>
</body></html>`;

export async function startDemoPage(): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
