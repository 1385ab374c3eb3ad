// `paprika <command>`: hub, worker, demo, nginx-conf. Bad flags print a message naming the
// flag and exit 2; nothing is started.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../hub-core/src/config.ts';
import { digitsValue } from '../hub-core/src/wire/env.ts';
import { NGINX_USAGE, nginxConf, parseNginxFlags } from './nginx-conf.ts';

export const USAGE = `usage: paprika <command> [flags]

commands:
  hub [--port N]                       run one hub (env: see README, PAPRIKA_*)
  worker --hub URL [flags]             run a worker agent (paprika worker --help lists its flags)
  demo [--simulate]                    hub on PAPRIKA_PORT with embedded defaults + two local workers
  nginx-conf --hub HOST:PORT ... [--listen [ADDR:]PORT] [--full]
                                       print nginx's http {} block for several hubs
                                       (/etc/nginx/conf.d/paprika.conf); --full: a
                                       whole nginx.conf for nginx -c FILE`;

class UsageError extends Error {}

const HUB_USAGE = 'usage: paprika hub [--port N]   (everything else from PAPRIKA_* variables: see the README)';
const DEMO_USAGE = 'usage: paprika demo [--simulate]   (a hub on PAPRIKA_PORT with embedded defaults and two local workers; --simulate: no Chrome, sleep jobs only)';

/** `paprika <command> --help`: that command's usage, exit 0, nothing started. */
async function commandUsage(command: string): Promise<string | undefined> {
  if (command === 'hub') return HUB_USAGE;
  if (command === 'demo') return DEMO_USAGE;
  if (command === 'nginx-conf') return NGINX_USAGE;
  if (command === 'worker') return (await import('../worker-agent/src/main.ts')).WORKER_USAGE;
  return undefined;
}

async function hubCommand(argv: string[]): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, strict: true, options: { port: { type: 'string' } } }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${HUB_USAGE}`);
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = digitsValue(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port expects a port number (0-65535), got ${JSON.stringify(values.port)}`);
  }
  loadConfig(process.env, { port }); // a bad variable stops us here, before any signal handler
  // Loaded here, not at the top: `paprika --help` and `nginx-conf` need none of the hub's modules.
  const { startHub } = await import('../hub-core/src/app/hub.ts');
  // Signals are caught from the start: one that arrives while the hub starts stops it
  // gracefully once it is up. A second one gets Node's default (an immediate exit).
  let hub: Awaited<ReturnType<typeof startHub>> | undefined;
  let stopRequested = false;
  const starting = new AbortController();
  const stop = async () => {
    if (!hub) {
      stopRequested = true;
      starting.abort(); // a start still waiting for Redis gives up now
      return;
    }
    try {
      await hub.stop();
    } catch (err) {
      console.error(`paprika hub: graceful stop failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    }
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  // From env and port, not from `config`: with port 0 startHub picks the free port first, so
  // the default hub id and PAPRIKA_HUB_URL name the port it listens on.
  try {
    hub = await startHub({ env: process.env, port, signal: starting.signal });
  } catch (err) {
    if (stopRequested) {
      console.error('paprika hub: stopped before it finished starting');
      process.exit(0);
    }
    throw err;
  }
  console.log(`paprika hub ${hub.config.hubId} listening on ${hub.url} (console: ${hub.url}/)`);
  if (stopRequested) await stop();
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  try {
    const usage = rest.includes('--help') || rest.includes('-h') ? await commandUsage(command) : undefined;
    if (usage) return void console.log(usage);
    switch (command) {
      case 'hub':
        return await hubCommand(rest);
      case 'worker': {
        const { runWorker, UsageError: WorkerUsage } = await import('../worker-agent/src/main.ts');
        try {
          await runWorker(rest);
        } catch (err) {
          if (err instanceof WorkerUsage) throw new UsageError(err.message);
          throw err;
        }
        return;
      }
      case 'demo': {
        const { runDemo } = await import('./demo.ts');
        return await runDemo(rest);
      }
      case 'nginx-conf':
        try {
          process.stdout.write(nginxConf(parseNginxFlags(rest)));
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        return;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE);
        return;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      console.error(`paprika: ${err.message}`);
      process.exit(2);
    }
    console.error(`paprika: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
