/**
 * Unit names: `<namespace>-<pod>-<container>.service` (the reference's rule), validated so a
 * name can never leave the unit directory or be something systemd would read differently.
 */

/** systemd's UNIT_NAME_MAX is 256 bytes including the terminating NUL. */
export const UNIT_NAME_MAX = 255;

/** Characters systemd allows in unit names, minus `@` (template instances) and `\` (escapes). */
const UNIT_NAME = /^[A-Za-z0-9:_.-]+\.(service|slice)$/;

export class UnitNameError extends Error {}

/** Why `name` is not a unit name we write or touch, or undefined when it is fine. */
export function unitNameProblem(name: string): string | undefined {
  if (name.length > UNIT_NAME_MAX) return `is ${name.length} characters long, more than systemd's limit of ${UNIT_NAME_MAX}`;
  if (name.includes('/')) return 'contains "/"';
  if (name.includes('..')) return 'contains ".."';
  if (!UNIT_NAME.test(name)) return 'may hold only letters, digits, ":", "_", "." and "-" and must end in .service or .slice';
  return undefined;
}

export function assertUnitName(name: string, what: string): string {
  const problem = unitNameProblem(name);
  if (problem) throw new UnitNameError(`${what}: the unit name ${JSON.stringify(name)} ${problem}`);
  return name;
}

/** The unit name of one container of a pod. */
export function podUnitName(namespace: string | undefined, pod: string, container: string): string {
  const ns = namespace || 'default';
  const base = container.endsWith('.service') ? container.slice(0, -'.service'.length) : container;
  const name = `${ns}-${pod}-${base}.service`;
  return assertUnitName(name, `pod ${ns}/${pod}, container ${JSON.stringify(container)}`);
}
