// The in-process pools the real-browser benchmark compares Paprika with, each run in a process
// of its own so its tree (Node + Chrome) can be measured alone. Plain JavaScript: no TypeScript
// loader in the measured process. Talks to the parent over stdio, one JSON object per line:
//   argv[2] = {"contender":"cluster"|"raw","lanes":2,"clients":4,"jobs":40,"warmup":4,"url":"…","screenshot":false,"chromePath":"…","args":[…]}
//   → {"ready":true}   ← "go"   → {"done":true,"ms":…,"latencies":[…],"failed":0}   ← "stop"
import readline from 'node:readline';
import puppeteer from 'puppeteer-core';
import { Cluster } from 'puppeteer-cluster';

const o = JSON.parse(process.argv[2]);
const lines = readline.createInterface({ input: process.stdin });
const nextLine = () => new Promise((resolve) => lines.once('line', resolve));
const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

/** The job both pools run: the same steps as Paprika's `fetch` runner. */
async function fetchJob(page) {
  const res = await page.goto(o.url, { waitUntil: 'load', timeout: 30_000 });
  const html = await page.content();
  const title = await page.title();
  if (o.screenshot) await page.screenshot({ type: 'png' });
  return { status: res?.status() ?? null, title, bytes: html.length };
}

/** A pool of `lanes` slots; `run(job)` waits for a slot. */
async function startPool() {
  // The lanes' flags open no first tab (`--no-startup-window`): nothing to wait for then.
  const launch = { executablePath: o.chromePath, headless: true, args: o.args, waitForInitialPage: !o.args.includes('--no-startup-window') };
  if (o.contender === 'cluster') {
    const cluster = await Cluster.launch({ puppeteer, concurrency: Cluster.CONCURRENCY_CONTEXT, maxConcurrency: o.lanes, puppeteerOptions: launch });
    await cluster.task(async ({ page }) => fetchJob(page));
    return { run: () => cluster.execute(o.url), close: () => cluster.close() };
  }
  // raw: one Chrome, a fresh incognito (default-less) context per job, `lanes` at a time.
  const browser = await puppeteer.launch(launch);
  let free = o.lanes;
  const waiters = [];
  return {
    async run() {
      if (free === 0) await new Promise((r) => waiters.push(r));
      else free--;
      try {
        const context = await browser.createBrowserContext();
        try {
          return await fetchJob(await context.newPage());
        } finally {
          await context.close();
        }
      } finally {
        const w = waiters.shift();
        if (w) w();
        else free++;
      }
    },
    close: () => browser.close(),
  };
}

async function closedLoop(total, clients, one) {
  let next = 0;
  const t = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < total) {
      next++;
      await one();
    }
  }));
  return performance.now() - t;
}

const pool = await startPool();
let failed = 0;
const latencies = [];
const one = async () => {
  const t = performance.now();
  try {
    await pool.run();
  } catch {
    failed++;
  }
  latencies.push(performance.now() - t);
};
await closedLoop(o.warmup, o.clients, one);
latencies.length = 0;
failed = 0;
say({ ready: true });
await nextLine();
const ms = await closedLoop(o.jobs, o.clients, one);
say({ done: true, ms, latencies, failed });
await nextLine();
await pool.close();
lines.close();
process.exit(0);
