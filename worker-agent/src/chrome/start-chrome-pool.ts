// Everything a real worker needs for its Chrome pool, in start order: find Chrome, start the
// live-view server (its port goes into every lane's view URL), build the pool (chrome-lane.ts).
import fs from 'node:fs';
import { hostAddresses, ownAddressRules } from 'paprika/wire';
import { EgressGuard } from '../egress/egress-guard.ts';
import type { LanePool } from '../lanes/lane.ts';
import { startLiveView } from '../live-view/live-view-server.ts';
import type { ViewKeyring } from '../live-view/view-access.ts';
import { planViewBind } from '../live-view/view-bind.ts';
import { chromePool, type ChromeLane } from './chrome-lane.ts';
import type { LaneLog } from './chrome-lane-core.ts';
import { CHROME_HELP, findChrome } from './find-chrome.ts';
import { removeStaleProfiles } from './stale-profiles.ts';

export interface StartChromePoolOptions {
  lanes: number;
  singleChrome: boolean;
  /** `--shared-chrome` / PAPRIKA_SHARED_CHROME: the lanes share one Chrome. */
  sharedChrome?: boolean;
  /** `--chrome PATH`, else PAPRIKA_CHROME_PATH (the caller resolves that order). */
  chromePath?: string;
  /** The worker's LAN address: the live view listens there, so the console can reach it. */
  lanIp: string;
  /** `--view-bind ADDR`: listen there instead (0.0.0.0 or :: only when asked for). */
  viewBind?: string;
  /** The link's view key, which the agent sets on welcome: the live view checks tokens with it. */
  viewKeys: ViewKeyring;
  novncBase?: string;
  /** Live-view port (default 0: any free port; the URLs reach the hub in `hello`). */
  viewPort?: number;
  log?: LaneLog;
  /** The hub this worker links to: its address is denied to jobs. */
  hubUrl?: string;
  recycleJobs?: number;
  maxRssMb?: number;
}

/** The worker's own addresses, denied to its jobs: the hub it links to and its live-view server. */
function ownRules(o: StartChromePoolOptions, view: { baseUrl: string } | undefined): string[] {
  const rules: string[] = [];
  if (o.hubUrl) {
    const hub = new URL(o.hubUrl);
    rules.push(`${hub.hostname}:${hub.port === '' ? (hub.protocol === 'https:' ? 443 : 80) : hub.port}`);
  }
  if (view) {
    const port = Number(new URL(view.baseUrl).port);
    rules.push(...ownAddressRules('0.0.0.0', port, hostAddresses()), `${o.lanIp}:${port}`);
  }
  return rules;
}

export class ChromeNotFoundError extends Error {}

export async function startChromePool(o: StartChromePoolOptions): Promise<{ pool: LanePool; stopExtras: () => Promise<void> }> {
  // A path the operator typed that does not exist is a mistake to report, not a hint to ignore.
  if (o.chromePath && !fs.existsSync(o.chromePath)) throw new ChromeNotFoundError(`Chrome not found at ${o.chromePath} (from --chrome or PAPRIKA_CHROME_PATH)\n${CHROME_HELP}`);
  const chromePath = findChrome({ explicitPath: o.chromePath });
  if (!chromePath) throw new ChromeNotFoundError(CHROME_HELP);

  const stale = await removeStaleProfiles();
  if (stale.length > 0) o.log?.info({ removed: stale.length }, 'removed Chrome profiles left by a worker that was killed');
  let lanes: readonly ChromeLane[] = [];
  // With a noVNC base the operator watches real screens; no screencast server is needed.
  const view = o.novncBase ? undefined : await startLiveViewOn(o, () => lanes);
  const egress = new EgressGuard(ownRules(o, view));
  const pool = chromePool({ lanes: o.lanes, chromePath, singleChrome: o.singleChrome, sharedChrome: o.sharedChrome, viewBase: view?.baseUrl, novncBase: o.novncBase, log: o.log, egress, recycleJobs: o.recycleJobs, maxRssMb: o.maxRssMb });
  lanes = pool.lanes;
  o.log?.info({ chrome: chromePath, lanes: lanes.length, shared_chrome: Boolean(o.sharedChrome), view: view?.baseUrl ?? o.novncBase }, 'chrome lanes ready to start');
  return { pool, stopExtras: async () => view?.stop() };
}

/** `--lan-ip` may name an address this host does not own (NAT, a VM): then loopback only, and say so. */
async function startLiveViewOn(o: StartChromePoolOptions, lanes: () => readonly ChromeLane[]) {
  const plan = planViewBind(o.lanIp, o.viewBind);
  const common = { port: o.viewPort ?? 0, lanes, keys: o.viewKeys };
  try {
    return await startLiveView({ ...common, ...plan.first });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRNOTAVAIL' || !plan.fallback) throw err;
    o.log?.warn(
      { lan_ip: o.lanIp, bind: plan.fallback.host },
      `live view is loopback-only: --lan-ip ${o.lanIp} is not an address of this host, so the console cannot reach the lane views; pass --view-bind ADDR (an address of this host, or 0.0.0.0 to listen on all) to change it`,
    );
    return startLiveView({ ...common, ...plan.fallback });
  }
}
