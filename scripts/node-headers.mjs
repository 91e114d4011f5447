// Runs before pnpm installs dependencies (pnpm:devPreinstall). better-sqlite3 compiles its
// native module with node-gyp, which fetches Node's headers from the internet unless they are in
// its cache. Node installs ship those headers (<prefix>/include/node, as Debian's nodejs and the
// official tarballs do): this links them into node-gyp's cache, so the build needs no network.
// It changes nothing when node-gyp already has headers for this Node or none are installed.
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

const version = process.version.slice(1);
const headers = join(dirname(dirname(process.execPath)), 'include', 'node');
const cache = process.env.XDG_CACHE_HOME ? join(process.env.XDG_CACHE_HOME, 'node-gyp') : join(homedir(), '.cache', 'node-gyp');
const target = join(cache, version);
if (existsSync(join(headers, 'node_api.h')) && !existsSync(join(target, 'installVersion'))) {
  try {
    mkdirSync(join(target, 'include'), { recursive: true });
    if (!existsSync(join(target, 'include', 'node'))) symlinkSync(headers, join(target, 'include', 'node'));
    // node-gyp's own mark of a complete header install (its package.json "installVersion").
    writeFileSync(join(target, 'installVersion'), '11\n');
    console.log(`linked Node's headers (${headers}) into node-gyp's cache (${target})`);
  } catch (e) {
    // Only a help: without it node-gyp fetches the headers itself, where it can.
    console.warn(`could not link Node's headers into ${target}: ${e.message}`);
  }
}
