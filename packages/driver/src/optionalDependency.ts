/**
 * The integrations a program installs only when it uses them: they are optional peer dependencies
 * of @sluice/driver, loaded the first time their feature runs. A missing one is the coded error
 * OPTIONAL_DEPENDENCY_MISSING, raised where the feature is asked for (load(), start(),
 * Session.create or startUI), with the command that installs it.
 */
import { createRequire } from 'node:module';
import { SluiceError } from '@sluice/state';

export type OptionalDependency = 'better-sqlite3' | 'ioredis' | 'prom-client' | 'uplot';

const require = createRequire(import.meta.url);

/** The range of each optional package, read from @sluice/driver's own peerDependencies (the package names itself: its exports list package.json). */
const peerRange = (name: OptionalDependency): string =>
  (require('@sluice/driver/package.json') as { peerDependencies: Record<OptionalDependency, string> }).peerDependencies[name];

function missing(name: OptionalDependency, feature: string, option: string, cause: unknown): SluiceError {
  return new SluiceError(
    'OPTIONAL_DEPENDENCY_MISSING',
    `${feature} needs the package ${name}, which is not installed: npm install ${name}@${peerRange(name)}`,
    { option, cause },
  );
}

const notFound = (e: unknown, request: string): boolean =>
  (e as NodeJS.ErrnoException)?.code === 'MODULE_NOT_FOUND' && String((e as Error).message).includes(`'${request}'`);

/**
 * The path of `name` (or of `file` inside it), checked without loading it: what load() and
 * start() call so that a missing package fails before any batch runs. `option` names what asked
 * for it (a format, a conf key).
 */
export function resolveOptional(name: OptionalDependency, feature: string, option: string, file?: string): string {
  const request = file === undefined ? name : `${name}/${file}`;
  try {
    return require.resolve(request);
  } catch (e) {
    if (notFound(e, request)) throw missing(name, feature, option, e);
    throw e;
  }
}

/** Whether `name` is installed (nothing is loaded). */
export function isInstalled(name: OptionalDependency): boolean {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** The package `name`, loaded once: a missing one is OPTIONAL_DEPENDENCY_MISSING naming `feature`. */
export function requireOptional<T>(name: OptionalDependency, feature: string, option: string): T {
  try {
    return require(name) as T;
  } catch (e) {
    if (notFound(e, name)) throw missing(name, feature, option, e);
    throw e;
  }
}
