// The real-browser workload's page, served on 127.0.0.1: about 30 KB in all, an HTML document
// with a stylesheet, two scripts (one builds part of the DOM) and three PNG images.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A w×h RGB PNG with a noisy gradient (so it does not compress to nothing). */
function png(w: number, h: number, seed: number): Buffer {
  const raw = Buffer.alloc((w * 3 + 1) * h);
  let s = seed;
  for (let y = 0; y < h; y++) {
    raw[y * (w * 3 + 1)] = 0;
    for (let x = 0; x < w; x++) {
      s = (s * 1103515245 + 12345) & 0x7fffffff;
      const o = y * (w * 3 + 1) + 1 + x * 3;
      raw[o] = (x * 4 + (s & 15)) & 255;
      raw[o + 1] = (y * 4 + ((s >> 4) & 15)) & 255;
      raw[o + 2] = ((x + y) * 2 + seed * 40) & 255;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const CSS = Array.from({ length: 60 }, (_, i) => `.c${i} { margin: ${i % 7}px; padding: ${i % 5}px ${i % 3}px; color: hsl(${i * 6}, 50%, 40%); border-left: ${i % 4}px solid #ccc; }`).join('\n') + '\nbody { font: 14px/1.4 sans-serif; max-width: 60em; margin: auto }\nimg { width: 96px; height: 96px }\n';
const LIB_JS = `window.lib = { fmt(n) { return n.toLocaleString('en-US'); }, sum(a) { return a.reduce((x, y) => x + y, 0); } };\n` + Array.from({ length: 40 }, (_, i) => `window.lib.f${i} = function (x) { let y = x; for (let k = 0; k < ${i + 5}; k++) y = (y * 31 + k) % 1000003; return y; };`).join('\n');
const APP_JS = `document.addEventListener('DOMContentLoaded', () => {
  const ul = document.getElementById('list');
  const values = [];
  for (let i = 0; i < 300; i++) {
    const li = document.createElement('li');
    li.className = 'c' + (i % 60);
    const v = window.lib['f' + (i % 40)](i);
    values.push(v);
    li.textContent = 'item ' + i + ': ' + window.lib.fmt(v);
    ul.appendChild(li);
  }
  document.getElementById('total').textContent = window.lib.fmt(window.lib.sum(values));
});`;
const PARAGRAPHS = Array.from({ length: 40 }, (_, i) => `<p class="c${i % 60}">Paragraph ${i}: ${'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor '.repeat(3)}</p>`).join('\n');
const HTML = `<!doctype html><html><head><meta charset="utf-8"><title>bench page</title><link rel="stylesheet" href="/style.css"><script src="/lib.js"></script><script src="/app.js" defer></script></head>
<body><h1>Bench page</h1><p>Total: <span id="total"></span></p>
<img src="/img/1.png" alt="one"><img src="/img/2.png" alt="two"><img src="/img/3.png" alt="three">
${PARAGRAPHS}
<ul id="list"></ul></body></html>`;

const FILES: Record<string, { type: string; body: Buffer }> = {
  '/': { type: 'text/html; charset=utf-8', body: Buffer.from(HTML) },
  '/style.css': { type: 'text/css', body: Buffer.from(CSS) },
  '/lib.js': { type: 'text/javascript', body: Buffer.from(LIB_JS) },
  '/app.js': { type: 'text/javascript', body: Buffer.from(APP_JS) },
  '/img/1.png': { type: 'image/png', body: png(40, 40, 1) },
  '/img/2.png': { type: 'image/png', body: png(40, 40, 2) },
  '/img/3.png': { type: 'image/png', body: png(40, 40, 3) },
};

export const PAGE_BYTES = Object.values(FILES).reduce((s, f) => s + f.body.length, 0);

export async function serveBenchPage(): Promise<{ url: string; bytes: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const f = FILES[(req.url ?? '/').split('?')[0]];
    if (!f) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length, 'cache-control': 'max-age=3600' }).end(f.body);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    bytes: PAGE_BYTES,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
