// Packaging for the desktop console: Windows (zip + Squirrel installer), Linux (deb + zip),
// macOS (zip). Before packaging, the renderer and the main side are built; the package holds
// only what runs: package.json, electron-dist/, renderer/dist/ and production node_modules.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { MakerDeb } from '@electron-forge/maker-deb';
import { MakerSquirrel } from '@electron-forge/maker-squirrel';
import { MakerZIP } from '@electron-forge/maker-zip';
import type { ForgeConfig } from '@electron-forge/shared-types';

const root = import.meta.dirname ?? process.cwd();
const KEEP = [/^\/package\.json$/, /^\/electron-dist(\/|$)/, /^\/renderer(\/dist(\/|$)|$)/, /^\/node_modules(\/|$)/];

const config: ForgeConfig = {
  packagerConfig: {
    name: 'Paprika',
    executableName: 'paprika-console',
    appBundleId: 'dev.paprika.console',
    asar: true,
    // Everything not listed is source, tests or local data: not shipped.
    ignore: (file: string) => file !== '' && !KEEP.some((re) => re.test(file)),
  },
  rebuildConfig: {},
  makers: [
    new MakerSquirrel({ name: 'paprika_console', setupExe: 'PaprikaConsoleSetup.exe' }, ['win32']),
    new MakerZIP({}, ['win32', 'darwin', 'linux']),
    new MakerDeb({ options: { name: 'paprika-console', productName: 'Paprika console', categories: ['Development', 'Network'], maintainer: 'Paprika', homepage: 'https://github.com/paprika' } }, ['linux']),
  ],
  hooks: {
    generateAssets: async () => {
      const node = process.execPath;
      execFileSync(node, [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', path.join(root, 'renderer/vite.config.ts')], { stdio: 'inherit', cwd: root });
      execFileSync(node, [path.join(root, 'electron/build.mjs')], { stdio: 'inherit', cwd: root });
    },
  },
};

export default config;
