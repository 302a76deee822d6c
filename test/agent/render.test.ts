import {
  environmentAssignment, execLine, podUnitName, PodLike, PodRenderError, renderNodeUnits, renderPodUnits,
  unitFileSlice, unitNameProblem, UnitNameError, defaultUnitDir, defaultKubeconfig,
} from '../../src/systemd';
import { REFERENCE_POD, REFERENCE_UNIT } from './reference';

const REFERENCE = REFERENCE_POD;

function pod(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): PodLike {
  return { metadata: { name: 'p', namespace: 'ns', ...metadata }, spec: { containers: [{ name: 'c', image: 'img:1', command: ['/bin/run'] }], ...spec } } as PodLike;
}

describe('the unit template (spec §2)', () => {
  it('renders the reference example byte for byte in system mode', () => {
    const [unit] = renderPodUnits(REFERENCE, { kubeconfig: '/root/.kube/config' });
    expect(unit.name).toBe('default-cleanup-test-ok-noop-service.service');
    expect(unit.content).toBe(REFERENCE_UNIT);
  });


  it('targets default.target and writes no User= line for the user manager', () => {
    const user = { windowsOptions: { runAsUserName: 'stackable' } };
    const p = pod({ securityContext: user });
    expect(renderPodUnits(p, { kubeconfig: '/k' })[0].content).toContain('\nUser=stackable\n');
    const session = renderPodUnits(p, { kubeconfig: '/k', session: true })[0].content;
    expect(session).not.toContain('User=');
    expect(session.endsWith('[Install]\nWantedBy=default.target')).toBe(true);
  });

  it('takes the container\'s user over the pod\'s and refuses names systemd would not take', () => {
    const p = pod({
      securityContext: { windowsOptions: { runAsUserName: 'podUser' } },
      containers: [{ name: 'c', image: 'i:1', command: ['/x'], securityContext: { windowsOptions: { runAsUserName: 'ctrUser' } } }],
    });
    expect(renderPodUnits(p, { kubeconfig: '/k' })[0].content).toContain('\nUser=ctrUser\n');
    expect(() => renderPodUnits(pod({ securityContext: { windowsOptions: { runAsUserName: 'root\nExecStartPre=/x' } } }), { kubeconfig: '/k' })).toThrow(PodRenderError);
  });

  it.each([
    ['Always', 'Restart=always', 'RemainAfterExit=no'],
    ['OnFailure', 'Restart=on-failure', 'RemainAfterExit=yes'],
    ['Never', 'Restart=on-abnormal', 'RemainAfterExit=yes'],
  ])('maps restartPolicy %s', (policy, restart, remain) => {
    const text = renderPodUnits(pod({ restartPolicy: policy }), { kubeconfig: '/k' })[0].content;
    expect(text).toContain(`\n${restart}\n`);
    expect(text).toContain(`\n${remain}\n`);
  });

  it('refuses an unknown restartPolicy and a fractional grace period', () => {
    expect(() => renderPodUnits(pod({ restartPolicy: 'Sometimes' }), { kubeconfig: '/k' })).toThrow(/restartPolicy "Sometimes"/);
    expect(() => renderPodUnits(pod({ terminationGracePeriodSeconds: 1.5 }), { kubeconfig: '/k' })).toThrow(/terminationGracePeriodSeconds/);
  });

  it('takes TimeoutStopSec from terminationGracePeriodSeconds', () => {
    expect(renderPodUnits(pod({ terminationGracePeriodSeconds: 5 }), { kubeconfig: '/k' })[0].content).toContain('\nTimeoutStopSec=5\n');
  });

  it('resolves a relative command under <package-dir>/<name>-<tag>/ and refuses to leave it', () => {
    const c = (command: string[], image = 'reg.example:5000/team/tool:2.1'): PodLike => pod({ containers: [{ name: 'c', image, command }] });
    expect(renderPodUnits(c(['bin/tool', '--x']), { kubeconfig: '/k', packageDir: '/pkgs' })[0].content).toContain('\nExecStart=/pkgs/tool-2.1/bin/tool --x\n');
    expect(() => renderPodUnits(c(['../../etc/evil']), { kubeconfig: '/k' })).toThrow(/leaves the package directory/);
    expect(() => renderPodUnits(c(['bin/tool'], 'tool'), { kubeconfig: '/k' })).toThrow(/image: "tool" must be <name>:<tag>/);
    expect(() => renderPodUnits(c([]), { kubeconfig: '/k' })).toThrow(/command is required/);
  });

  it('writes each env var once, later entries winning, sorted with the other lines', () => {
    const p = pod({ containers: [{ name: 'c', image: 'i:1', command: ['/x'], env: [{ name: 'B', value: '1' }, { name: 'A', value: 'x' }, { name: 'B', value: '2' }] }] });
    const lines = renderPodUnits(p, { kubeconfig: '/k' })[0].content.split('\n').filter((l) => l.startsWith('Environment='));
    expect(lines).toEqual(['Environment="A=x"', 'Environment="B=2"', 'Environment="KUBECONFIG=/k"']);
  });

  it('refuses valueFrom, which a node cannot resolve', () => {
    const p = pod({ containers: [{ name: 'c', image: 'i:1', command: ['/x'], env: [{ name: 'S', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }] });
    expect(() => renderPodUnits(p, { kubeconfig: '/k' })).toThrow(/env\[0\] \(S\): valueFrom is not supported/);
  });
});

describe('escaping (systemd.syntax(7), systemd.service(5))', () => {
  it('leaves plain words alone and quotes everything else with C escapes, %% and $$', () => {
    expect(execLine(['/bin/x', 'a', '--b=c', '1.2:3,4@5+6'])).toBe('/bin/x a --b=c 1.2:3,4@5+6');
    expect(execLine(['/bin/x', 'a b', 'q"t', 'b\\s', '50%', '$HOME', 'n\nl', '', ';', '\x01'])).toBe(
      '/bin/x "a b" "q\\"t" "b\\\\s" "50%%" "$$HOME" "n\\nl" "" ";" "\\x01"',
    );
  });

  it('quotes the command path without $ escaping and refuses $ in it', () => {
    expect(execLine(['/opt/my dir/100%'])).toBe('"/opt/my dir/100%%"');
    expect(() => execLine(['/opt/$x'])).toThrow(/contains "\$"/);
    expect(() => execLine(['/bin/x', 'nul\0'])).toThrow(/NUL/);
  });

  it('writes Environment= values quoted, with %% but $ kept, and refuses bad names and control characters', () => {
    expect(environmentAssignment('A', 'x "y" $Z 5% \\ \n')).toBe('"A=x \\"y\\" $Z 5%% \\\\ \\n"');
    expect(() => environmentAssignment('1A', 'x')).toThrow(/not valid/);
    expect(() => environmentAssignment('A-B', 'x')).toThrow(/not valid/);
    expect(() => environmentAssignment('A', 'bell\x07')).toThrow(/control character/);
  });
});

describe('unit names', () => {
  it('is <namespace>-<pod>-<container>.service, namespace default, without a doubled .service', () => {
    expect(podUnitName(undefined, 'p', 'c')).toBe('default-p-c.service');
    expect(podUnitName('ns', 'p', 'c.service')).toBe('ns-p-c.service');
  });

  it.each([
    ['a/b', 'contains "/"'],
    ['..', 'contains ".."'],
    ['x'.repeat(250), 'more than systemd\'s limit of 255'],
    ['sp ace', 'may hold only'],
    ['tmpl@', 'may hold only'],
  ])('refuses a container named %j', (container, why) => {
    expect(() => podUnitName('ns', 'p', container)).toThrow(UnitNameError);
    expect(() => podUnitName('ns', 'p', container)).toThrow(why);
  });

  it('accepts names up to 255 characters', () => {
    expect(unitNameProblem(`${'a'.repeat(247)}.service`)).toBeUndefined();
    expect(unitNameProblem(`${'a'.repeat(248)}.service`)).toMatch(/256 characters/);
  });
});

describe('the units of a node\'s pods', () => {
  it('reports two pods that map to the same unit and renders neither', () => {
    const a = pod({}, { namespace: 'a-b', name: 'c' });
    const b = pod({}, { namespace: 'a', name: 'b-c' });
    const ok = pod({}, { namespace: 'a', name: 'ok' });
    const units = renderNodeUnits([a, b, ok], { kubeconfig: '/k' });
    expect([...units.collisions]).toEqual([['a-b-c-c.service', ['a-b/c', 'a/b-c']]]);
    expect([...units.units.keys()]).toEqual(['a-ok-c.service']);
  });

  it('reports containers of one pod that map to the same unit', () => {
    const p = pod({ containers: [{ name: 'x', image: 'i:1', command: ['/a'] }, { name: 'x.service', image: 'i:1', command: ['/b'] }] });
    expect(() => renderPodUnits(p, { kubeconfig: '/k' })).toThrow(/two containers map to the unit ns-p-x.service/);
  });

  it('keeps the unit names of a pod it cannot render, so the cleanup can leave them alone', () => {
    const broken = pod({ restartPolicy: 'Sometimes' });
    const units = renderNodeUnits([broken], { kubeconfig: '/k' });
    expect(units.errors).toEqual([{ pod: 'ns/p', message: expect.stringContaining('restartPolicy'), unitNames: ['ns-p-c.service'] }]);
    expect(units.units.size).toBe(0);
  });

  it('marks the units of a terminating pod', () => {
    const units = renderNodeUnits([pod({}, { deletionTimestamp: '2021-09-24T11:52:20Z' })], { kubeconfig: '/k' });
    expect(units.units.get('ns-p-c.service')?.terminating).toBe(true);
  });
});

describe('unit files and paths', () => {
  it('reads the slice of a unit file\'s [Service] section only', () => {
    expect(unitFileSlice('[Unit]\nSlice=wrong.slice\n[Service]\nSlice=system-stackable.slice\n')).toBe('system-stackable.slice');
    expect(unitFileSlice('[Service]\nExecStart=/x\n')).toBeUndefined();
  });

  it('defaults the unit dir and kubeconfig as the reference does', () => {
    expect(defaultUnitDir(false, { XDG_CONFIG_HOME: '/c' }, '/h')).toBe('/lib/systemd/system');
    expect(defaultUnitDir(true, { XDG_CONFIG_HOME: '/c' }, '/h')).toBe('/c/systemd/user');
    expect(defaultUnitDir(true, {}, '/h')).toBe('/h/.config/systemd/user');
    expect(defaultKubeconfig('/f', { KUBECONFIG: '/e' }, '/h')).toBe('/f');
    expect(defaultKubeconfig(undefined, { KUBECONFIG: '/e1:/e2' }, '/h')).toBe('/e1');
    expect(defaultKubeconfig(undefined, {}, '/h')).toBe('/h/.kube/config');
  });
});
