import { Testing } from 'cdk8s';
import { tlsRequirements, UyuniTls, UyuniTlsProps } from '../../src/constructs/uyuni-tls';
import { K8sObject, validateObject } from '../helpers/validate';

const FQDN = 'uyuni.example.com';
const SUBJECT = { country: 'DE', state: 'Bayern', city: 'Nuernberg', organization: 'Uyuni', organizationalUnit: 'Uyuni' };
const X509_SUBJECT = { countries: ['DE'], provinces: ['Bayern'], localities: ['Nuernberg'], organizations: ['Uyuni'], organizationalUnits: ['Uyuni'] };
const MINIMAL: UyuniTlsProps = {
  namespace: 'uyuni', mode: 'generated', fqdn: FQDN, subject: SUBJECT, duration: '8760h', renewBefore: '720h', caDuration: '87600h',
};
const LEAF_KEY = { algorithm: 'RSA', size: 2048, encoding: 'PKCS1', rotationPolicy: 'Always' };
const CA_ISSUER_REF = { name: 'uyuni-issuer', kind: 'Issuer', group: 'cert-manager.io' };

const synth = (props: Partial<UyuniTlsProps> = {}): K8sObject[] => {
  const chart = Testing.chart();
  new UyuniTls(chart, 'Tls', { ...MINIMAL, ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  return objects;
};
const ids = (objects: K8sObject[]) => objects.map((o) => `${o.apiVersion} ${o.kind} ${o.metadata.namespace}/${o.metadata.name}`);
const named = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in ${ids(objects).join(', ')}`);
  return found;
};

describe('UyuniTls', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new UyuniTls(chart, 'Tls', MINIMAL);
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  describe('generated', () => {
    const objects = synth();

    it('chains a self-signed root issuer → the CA → the CA issuer → uyuni-cert and db-cert, all namespaced', () => {
      expect(ids(objects)).toEqual([
        'cert-manager.io/v1 Issuer uyuni/uyuni-root-issuer',
        'cert-manager.io/v1 Certificate uyuni/uyuni-ca',
        'cert-manager.io/v1 Issuer uyuni/uyuni-issuer',
        'cert-manager.io/v1 Certificate uyuni/uyuni-cert',
        'cert-manager.io/v1 Certificate uyuni/db-cert',
      ]);
      expect(named(objects, 'Issuer', 'uyuni-root-issuer').spec).toEqual({ selfSigned: {} });
      expect(named(objects, 'Issuer', 'uyuni-issuer').spec).toEqual({ ca: { secretName: 'uyuni-ca' } });
    });

    it('makes the CA: ECDSA 256 for the FQDN, with the subject and the CA lifetime, from the root issuer', () => {
      expect(named(objects, 'Certificate', 'uyuni-ca').spec).toEqual({
        isCA: true,
        commonName: FQDN,
        dnsNames: [FQDN],
        secretName: 'uyuni-ca',
        duration: '87600h',
        renewBefore: '720h',
        privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
        subject: X509_SUBJECT,
        issuerRef: { name: 'uyuni-root-issuer', kind: 'Issuer', group: 'cert-manager.io' },
      });
    });

    it('writes the CA\'s e-mail address only when there is one', () => {
      expect(named(objects, 'Certificate', 'uyuni-ca').spec).not.toHaveProperty('emailAddresses');
      const ca = named(synth({ subject: { ...SUBJECT, email: 'ca@example.com' } }), 'Certificate', 'uyuni-ca');
      expect(ca.spec.emailAddresses).toEqual(['ca@example.com']);
    });

    it('issues uyuni-cert for the FQDN: RSA 2048 PKCS1, server auth, from the CA issuer', () => {
      expect(named(objects, 'Certificate', 'uyuni-cert').spec).toEqual({
        secretName: 'uyuni-cert',
        secretTemplate: { labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'tls' } },
        isCA: false,
        dnsNames: [FQDN],
        duration: '8760h',
        renewBefore: '720h',
        privateKey: LEAF_KEY,
        usages: ['server auth'],
        issuerRef: CA_ISSUER_REF,
      });
    });

    it('issues db-cert for db, reportdb and the FQDN, named reportdb, with the subject', () => {
      expect(named(objects, 'Certificate', 'db-cert').spec).toEqual({
        secretName: 'db-cert',
        secretTemplate: { labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'tls' } },
        isCA: false,
        commonName: 'reportdb',
        dnsNames: ['db', 'reportdb', FQDN],
        subject: X509_SUBJECT,
        duration: '8760h',
        renewBefore: '720h',
        privateKey: LEAF_KEY,
        usages: ['server auth'],
        issuerRef: CA_ISSUER_REF,
      });
    });

    it('writes the lifetimes given', () => {
      const o = synth({ duration: '2160h', renewBefore: '360h', caDuration: '43800h' });
      expect(named(o, 'Certificate', 'uyuni-ca').spec).toMatchObject({ duration: '43800h', renewBefore: '360h' });
      for (const name of ['uyuni-cert', 'db-cert']) expect(named(o, 'Certificate', name).spec).toMatchObject({ duration: '2160h', renewBefore: '360h' });
    });

    it('follows the FQDN, subject and namespace given', () => {
      const o = synth({ namespace: 'mlm', fqdn: 'mlm.example.org', subject: { ...SUBJECT, country: 'FR', organization: 'Example' } });
      for (const obj of o) expect(obj.metadata.namespace).toBe('mlm');
      expect(named(o, 'Certificate', 'uyuni-ca').spec).toMatchObject({
        commonName: 'mlm.example.org', dnsNames: ['mlm.example.org'], subject: { countries: ['FR'], organizations: ['Example'] },
      });
      expect(named(o, 'Certificate', 'uyuni-cert').spec.dnsNames).toEqual(['mlm.example.org']);
      expect(named(o, 'Certificate', 'db-cert').spec.dnsNames).toEqual(['db', 'reportdb', 'mlm.example.org']);
    });

    it('labels every object part-of uyuni, component tls', () => {
      for (const o of objects) {
        expect(o.metadata.labels).toEqual({
          'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'tls', 'app.kubernetes.io/managed-by': 'uyuni-cdk',
        });
      }
    });

    it('requires nothing from the user', () => {
      expect(tlsRequirements('generated', FQDN, 'uyuni')).toEqual([]);
    });
  });

  describe('migrated', () => {
    it('issues both certificates from the user\'s CA Secret, without making a CA', () => {
      const objects = synth({ mode: 'migrated' });
      expect(ids(objects)).toEqual([
        'cert-manager.io/v1 Issuer uyuni/uyuni-issuer',
        'cert-manager.io/v1 Certificate uyuni/uyuni-cert',
        'cert-manager.io/v1 Certificate uyuni/db-cert',
      ]);
      expect(named(objects, 'Issuer', 'uyuni-issuer').spec).toEqual({ ca: { secretName: 'uyuni-ca' } });
      expect(named(objects, 'Certificate', 'db-cert').spec).toMatchObject({ commonName: 'reportdb', dnsNames: ['db', 'reportdb', FQDN] });
    });

    it('requires Secret uyuni-ca, explaining how to decrypt the old CA key', () => {
      const [req, ...rest] = tlsRequirements('migrated', FQDN, 'mlm');
      expect(rest).toEqual([]);
      expect(req).toMatchObject({ kind: 'Secret', name: 'uyuni-ca', namespace: 'mlm', keys: ['tls.crt', 'tls.key'], ifMissing: 'fail' });
      expect(req.generate).toBeUndefined();
      expect(req.message).toMatch(/encrypted/);
      expect(req.message).toContain('openssl pkey -in RHN-ORG-PRIVATE-SSL-KEY');
      expect(req.message).toContain('kubectl -n mlm create secret tls uyuni-ca --cert=RHN-ORG-TRUSTED-SSL-CERT --key=ca.key');
    });
  });

  describe('third-party', () => {
    it('makes no object', () => {
      expect(synth({ mode: 'third-party' })).toEqual([]);
    });

    it('requires uyuni-cert and db-cert with tls.crt, tls.key and ca.crt', () => {
      const reqs = tlsRequirements('third-party', FQDN, 'mlm');
      expect(reqs.map((r) => ({ kind: r.kind, name: r.name, namespace: r.namespace, keys: r.keys, ifMissing: r.ifMissing }))).toEqual([
        { kind: 'Secret', name: 'uyuni-cert', namespace: 'mlm', keys: ['tls.crt', 'tls.key', 'ca.crt'], ifMissing: 'fail' },
        { kind: 'Secret', name: 'db-cert', namespace: 'mlm', keys: ['tls.crt', 'tls.key', 'ca.crt'], ifMissing: 'fail' },
      ]);
      expect(reqs[0].message).toContain(FQDN);
      expect(reqs[0].message).toContain('kubectl -n mlm create secret generic uyuni-cert');
      expect(reqs[1].message).toContain(`db, reportdb and ${FQDN}`);
      expect(reqs[1].message).toContain('kubectl -n mlm create secret generic db-cert');
      for (const r of reqs) expect(r.message).toContain('--from-file=ca.crt=');
    });
  });
});
