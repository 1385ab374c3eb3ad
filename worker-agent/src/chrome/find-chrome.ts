// Which Chrome a worker's lanes launch. The caller passes `--chrome` / PAPRIKA_CHROME_PATH in
// as `explicitPath` (config is read once, in one place); this module never reads the environment.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface FindChromeOptions {
  /** From `--chrome PATH` or PAPRIKA_CHROME_PATH; wins when the file exists. */
  explicitPath?: string;
  /** Folder holding the bundle (Windows portable: `chrome/chrome.exe` sits next to it). */
  bundleDir?: string;
  platform?: NodeJS.Platform;
  exists?: (file: string) => boolean;
}

export const SYSTEM_CHROME_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'] as const;

export const CHROME_HELP = [
  'No Chrome or Chromium was found for the worker lanes. Any one of these fixes it:',
  '  • install Chromium:            sudo apt-get install chromium   (Debian/Ubuntu)',
  '  • point at an installed one:   PAPRIKA_CHROME_PATH=/path/to/chrome   or   --chrome /path/to/chrome',
  '  • Windows portable package:    put the portable Chrome in a `chrome` folder next to paprika-worker.mjs',
  '  • try Paprika without Chrome:  paprika demo --simulate   (lanes run sleep jobs and ping only)',
].join('\n');

function fileExists(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

// `puppeteer` is an optional dependency (its install step downloads a browser, which fails
// behind a proxy; npm then leaves the package out). Required by a computed name so a bundler
// leaves it alone, and only here: lanes drive Chrome through puppeteer-core.
const OPTIONAL_PUPPETEER = 'puppeteer';

/** puppeteer's own downloaded browser, if one was ever downloaded (its path is computed, not checked). */
function puppeteerBrowserPath(): string | undefined {
  try {
    const puppeteer = createRequire(import.meta.url)(OPTIONAL_PUPPETEER) as { executablePath(): string };
    return puppeteer.executablePath();
  } catch {
    return undefined; // puppeteer not installed, or no cache configured: not an error, just no candidate
  }
}

export function chromeCandidates(o: FindChromeOptions = {}): string[] {
  const platform = o.platform ?? process.platform;
  const candidates: string[] = [];
  if (o.explicitPath) candidates.push(o.explicitPath);
  const downloaded = puppeteerBrowserPath();
  if (downloaded) candidates.push(downloaded);
  if (platform === 'win32') {
    // The portable package is node.exe + paprika-worker.mjs + chrome\ in one folder (docs/windows-portable.md).
    const bundleDir = o.bundleDir ?? path.dirname(fileURLToPath(import.meta.url));
    candidates.push(path.win32.join(bundleDir, 'chrome', 'chrome.exe'), path.win32.join(path.dirname(process.execPath), 'chrome', 'chrome.exe'));
  } else {
    candidates.push(...SYSTEM_CHROME_PATHS);
  }
  return [...new Set(candidates)];
}

/** The first Chrome that exists, in the documented order; undefined when none (show CHROME_HELP). */
export function findChrome(o: FindChromeOptions = {}): string | undefined {
  const exists = o.exists ?? fileExists;
  return chromeCandidates(o).find((file) => exists(file));
}
