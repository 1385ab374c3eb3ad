// corkPerTurn on a real socket pair over loopback: the frames of one turn reach the kernel in
// one write, a frame of a later turn in its own, and every byte arrives in order. The writes
// are counted where they leave the stream (its writev/write), the bytes where they arrive.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { corkPerTurn } from '../../../hub-core/src/wire/turn-writes.ts';

const sockets: net.Socket[] = [];
let server: net.Server | undefined;

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function pair(): Promise<{ client: net.Socket; received: () => string; writes: () => number }> {
  let peer!: net.Socket;
  let got = '';
  const accepted = new Promise<void>((resolve) => {
    server = net.createServer((s) => {
      peer = s;
      sockets.push(s);
      s.setEncoding('utf8');
      s.on('data', (d: string) => (got += d));
      resolve();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const client = net.connect((server!.address() as net.AddressInfo).port, '127.0.0.1');
  sockets.push(client);
  await Promise.all([new Promise((r) => client.once('connect', r)), accepted]);
  void peer;
  // What the stream hands the kernel: each _write or _writev is one system call.
  let writes = 0;
  const proto = client as unknown as { _writev: (...a: unknown[]) => unknown; _write: (...a: unknown[]) => unknown };
  const writev = proto._writev.bind(client);
  const write = proto._write.bind(client);
  proto._writev = (...a) => (writes++, writev(...a));
  proto._write = (...a) => (writes++, write(...a));
  return { client, received: () => got, writes: () => writes };
}

const nextTurn = () => new Promise((r) => setImmediate(r));

describe('corkPerTurn', () => {
  it('sends the writes of one turn in one system call and a later turn in its own, all bytes in order', async () => {
    const { client, received, writes } = await pair();
    const writes_ = corkPerTurn(client);
    for (let i = 0; i < 10; i++) {
      writes_.hold();
      client.write(`a${i};`);
    }
    expect(writes()).toBe(0); // held until the turn ends
    await nextTurn();
    expect(writes()).toBe(1);
    writes_.hold();
    client.write('b;');
    await nextTurn();
    expect(writes()).toBe(2);
    const want = `${Array.from({ length: 10 }, (_, i) => `a${i};`).join('')}b;`;
    await new Promise<void>((resolve) => {
      const check = () => (received() === want ? resolve() : setImmediate(check));
      check();
    });
    expect(received()).toBe(want);
  });

  it('without it, each write is a system call of its own', async () => {
    const { client, writes } = await pair();
    for (let i = 0; i < 10; i++) client.write(`a${i};`);
    await nextTurn();
    expect(writes()).toBe(10);
  });

  it('flush writes what is held at once, within the turn (a process about to exit)', async () => {
    const { client, writes } = await pair();
    const turn = corkPerTurn(client);
    turn.hold();
    client.write('goodbye;');
    client.write('close;');
    expect(writes()).toBe(0);
    turn.flush();
    expect(writes()).toBe(1);
    await nextTurn(); // the turn's own release finds nothing left to do
    expect(client.writableCorked).toBe(0);
    expect(writes()).toBe(1);
  });

  it('leaves a destroyed socket alone', async () => {
    const { client } = await pair();
    const turn = corkPerTurn(client);
    client.destroy();
    turn.hold();
    await nextTurn();
    expect(client.writableCorked).toBe(0);
  });
});
