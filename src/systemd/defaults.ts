/**
 * The node agent's defaults, defined once: the renderer, the agent's own unit, the CLI's
 * options and the configuration schema read them from here.
 */

/** Root under which a relative `command[0]` resolves, as `<packageDir>/<image-name>-<image-tag>/`. */
export const DEFAULT_PACKAGE_DIR = '/opt/stackable/packages';

/** The slice every pod unit is put into; the cleanup removes only units of it. */
export const DEFAULT_SLICE = 'system-stackable.slice';

/** Where the system manager's unit files go. */
export const SYSTEM_UNIT_DIR = '/lib/systemd/system';

/** D-Bus calls the cleanup has in flight at the same time (units looked at, units stopped). */
export const DEFAULT_CONCURRENCY = 64;

/** Limit for each page of the cleanup's pod list. */
export const DEFAULT_API_TIMEOUT_SECONDS = 30;

/** Limit for each stop job of the cleanup. */
export const DEFAULT_JOB_TIMEOUT_SECONDS = 120;
