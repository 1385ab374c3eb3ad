// A TCP relay on 127.0.0.1 that can go silent: cut() stops passing bytes on every connection it
// holds, both ways, without a FIN or RST (a cable pulled, a NAT that forgot the flow, a frozen
// peer behind a proxy), while new connections pass as before, to the same target or to the one
// retarget() names (a load balancer that sends the re-link to another hub); freeze() makes new
// connections silent too.
import net from 'node:net';

export interface BlackholeProxy {
  url: string;
  cut(): void;
  /** cut(), and from now on accept connections and pass nothing: a frozen process whose kernel still accepts. */
  freeze(): void;
  retarget(target: string): void;
  close(): Promise<void>;
}

export async function startBlackholeProxy(target: string): Promise<BlackholeProxy> {
  let to = new URL(target);
  const pairs = new Set<{ cut: boolean; a: net.Socket; b: net.Socket }>();
  /** Every socket either side, cut or not, until it closes: close() ends them all. */
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const server = net.createServer((a) => {
    if (frozen) {
      sockets.add(a);
      a.on('close', () => sockets.delete(a)).on('error', () => {});
      a.resume(); // read and drop: nothing ever answers
      return;
    }
    const b = net.connect(Number(to.port), to.hostname);
    for (const s of [a, b]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    const pair = { cut: false, a, b };
    pairs.add(pair);
    a.on('data', (d) => pair.cut || b.write(d));
    b.on('data', (d) => pair.cut || a.write(d));
    const end = () => {
      pairs.delete(pair);
      if (!pair.cut) {
        a.destroy();
        b.destroy();
      }
    };
    a.on('close', end).on('error', () => {});
    b.on('close', end).on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `${new URL(target).protocol}//127.0.0.1:${port}`,
    cut: () => {
      for (const p of pairs) p.cut = true;
    },
    freeze: () => {
      frozen = true;
      for (const p of pairs) p.cut = true;
    },
    retarget: (next) => {
      to = new URL(next);
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
