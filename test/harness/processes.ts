// `paprika hub` as a real child process, for tests that run the CLI as an operator would.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { PAPRIKA_BIN } from './agents.ts';
import { assertTestRedisPrefix } from './services.ts';

export interface HubProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function spawnHub(port: number, env: Record<string, string>, opts: { readyTimeoutMs?: number; nodeArgs?: string[] } = {}): Promise<HubProcess> {
  const fullEnv = { ...process.env, PAPRIKA_LOG_LEVEL: 'warn', ...env };
  assertTestRedisPrefix(fullEnv);
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), PAPRIKA_BIN, 'hub', '--port', String(port)], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let killedByUs = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => {
      // A hub that dies on its own is a bug worth seeing in the test output.
      if (!killedByUs) console.error(`hub on port ${port} exited by itself (code ${code}, signal ${signal}):\n${out.slice(-4000)}`);
      resolve(code);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  // A hub process starts in 1–3 s on a quiet box; a loaded CI has taken over 20 s (module loading, PGlite).
  const until = Date.now() + (opts.readyTimeoutMs ?? 45_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`hub exited (${child.exitCode}):\n${out}`);
    try {
      const r = await fetch(`${url}/healthz`);
      // The answer must come from this child: with its hub id, while it still runs.
      const body = r.status === 200 ? ((await r.json()) as { hub_id?: string }) : undefined;
      if (body && (!env.PAPRIKA_HUB_ID || body.hub_id === env.PAPRIKA_HUB_ID) && child.exitCode === null) break;
    } catch {
      // not up yet
    }
    if (Date.now() > until) {
      // Leave no half-started hub behind: it would hold the port the next attempt needs.
      killedByUs = true;
      child.kill('SIGKILL');
      await exited;
      throw new Error(`hub did not come up:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    output: () => out,
    exited,
    async kill(signal = 'SIGKILL') {
      killedByUs = true;
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

export { freePort } from '../../hub-core/src/http/free-port.ts';

/**
 * A free port below the kernel's ephemeral range (32768+ on Linux), for a server that is
 * restarted on the same port: while it is down, an outgoing connection could otherwise be
 * given that port as its local one, and the restart would fail with EADDRINUSE.
 */
export async function stablePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port found in 20000-31999');
}

// Moved to wait.ts; kept here so existing imports keep working.
export { waitFor } from './wait.ts';
