/**
 * The support bundle's scrubber (src/runtime/verbs/redact.ts), both ways: the secrets a log can show, in
 * every form it prints them, are gone; the words around them (user and database names, volume
 * names that contain a short value) are kept, and redactions.txt says what went where.
 */
import { Redactor, REDACTED, SecretValue } from '../../src/runtime/verbs/redact';

const PASSWORD = 'Xk9"mQ2\\vL7&pR4!tW8@zN3%'; // 24 characters, with what URLs and JSON escape
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.c2VydmljZWFjY291bnQ.sig_4711abcd';
const KEY_BODY = ['MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj', 'MZJ1dD8QVHqVKWe3nDQAQGvBn7W5E+XrV8hPUZq0Uc8lq+uYxK5PpgQ3rZpTyeB', 'Zm9v'];
const KEY = `-----BEGIN PRIVATE KEY-----\n${KEY_BODY.join('\n')}\n-----END PRIVATE KEY-----\n`;
const CERT = '-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----\n';

const secrets: SecretValue[] = [
  { ref: 'uyuni/db-credentials/username', key: 'username', value: 'spacewalk' },
  { ref: 'uyuni/db-credentials/password', key: 'password', value: PASSWORD },
  { ref: 'uyuni/db-admin-credentials/username', key: 'username', value: 'postgres' },
  { ref: 'uyuni/admin-credentials/username', key: 'username', value: 'admin' },
  { ref: 'uyuni/db-credentials/database', key: 'database', value: 'susemanager' },
  { ref: 'uyuni/report-credentials/pin', key: 'pin', value: 'pgsql' },
  { ref: 'uyuni/sa-token/token', key: 'token', value: TOKEN },
  { ref: 'uyuni/uyuni-ca/tls.key', key: 'tls.key', value: KEY },
  { ref: 'uyuni/uyuni-ca/tls.crt', key: 'tls.crt', value: CERT },
];

const LOG = [
  'mounting var-pgsql and var-pgsql18 for the migration',
  'env PWD=/srv/www/htdocs SECRET_NAME_FIELD: uyuni-db-pass',
  'image registry.opensuse.org/uyuni/server-postgresql:5.1 as user postgres, database susemanager',
  'setup: admin login spacewalk',
  `db password set: ${PASSWORD}`,
  `jdbc url postgresql://spacewalk:${encodeURIComponent(PASSWORD)}@db:5432/susemanager`,
  `{"user":"spacewalk","pass":${JSON.stringify(PASSWORD)}}`,
  `pass64 ${Buffer.from(PASSWORD).toString('base64')} hex ${Buffer.from(PASSWORD).toString('hex')}`,
  `token ${TOKEN}`,
  `key line ${KEY_BODY[0]}`,
  `key tail ${KEY_BODY[1]}`,
  'a word that holds no secret: Xk9#mQ2$vL7&pR4!tW8@zN3%extra is longer',
  'login password=hunter2 ok',
  'run: psql --password s3cr3t-flag -U postgres',
  'run: tool --password=another-one --no-password --password-file /etc/pw',
  'GET /api Authorization: Basic dXNlcjpwYXNz',
  'header bearer abcdefghijklmnop1234 sent',
  'yaml password: plain-in-config',
  CERT.trim(),
].join('\n');

describe('the support scrubber', () => {
  const r = new Redactor(secrets);
  const out = r.scrub(LOG, 'pods/setup/main.log');

  it('removes each secret in each form and each credential pattern', () => {
    for (const gone of [
      PASSWORD, encodeURIComponent(PASSWORD), JSON.stringify(PASSWORD).slice(1, -1), Buffer.from(PASSWORD).toString('base64'), Buffer.from(PASSWORD).toString('hex'),
      TOKEN, KEY_BODY[0], KEY_BODY[1], 'hunter2', 's3cr3t-flag', 'another-one', 'dXNlcjpwYXNz', 'abcdefghijklmnop1234', 'plain-in-config',
    ]) expect({ gone, found: out.includes(gone) }).toEqual({ gone, found: false });
    expect(out).toContain(`jdbc url postgresql://spacewalk:${REDACTED}@db:5432/susemanager`);
    expect(out).toContain('login password=<redacted> ok');
    expect(out).toContain('--password=<redacted> --no-password --password-file /etc/pw');
    expect(out).toContain('Authorization: Basic <redacted>');
    expect(out).toContain('header bearer <redacted> sent');
  });

  it('keeps user, database and volume names, short values, certificates and a longer word that contains a secret', () => {
    expect(out).toContain('mounting var-pgsql and var-pgsql18 for the migration');
    expect(out).toContain('env PWD=/srv/www/htdocs SECRET_NAME_FIELD: uyuni-db-pass');
    expect(out).toContain('registry.opensuse.org/uyuni/server-postgresql:5.1 as user postgres, database susemanager');
    expect(out).toContain('setup: admin login spacewalk');
    expect(out).toContain('{"user":"spacewalk","pass":"<redacted>"}');
    expect(out).toContain(CERT.trim());
    // whole tokens only: the password inside a longer word is no password
    expect(out).toContain('Xk9#mQ2$vL7&pR4!tW8@zN3%extra');
  });

  it('replaces a private key whole, its lines wherever they appear, and any key block', () => {
    expect(r.scrub(`before\n${KEY}after\n`, 'runs/x.log')).toBe(`before\n${REDACTED}\nafter\n`);
    // printed line by line (prefixed): each line of 8 characters or more is gone; a short tail says nothing of the key
    expect(r.scrub(KEY_BODY.map((l) => `t=1 ${l}`).join('\n'), 'runs/x.log')).toBe(`t=1 ${REDACTED}\nt=1 ${REDACTED}\nt=1 Zm9v`);
    // a block of a key no Secret holds is a pattern
    const other = new Redactor([]).scrub('-----BEGIN RSA PRIVATE KEY-----\nabc\ndef\n-----END RSA PRIVATE KEY-----', 'f');
    expect(other).toBe(`-----BEGIN RSA PRIVATE KEY-----\n${REDACTED}\n-----END RSA PRIVATE KEY-----`);
  });

  it('reports which key was scrubbed how often in which files, and which were kept, never a value', () => {
    r.scrub(`again ${PASSWORD}`, 'events.txt');
    const report = r.report();
    expect(report).toMatch(/^ {2}uyuni\/db-credentials\/password: 6 times in 2 files \(\d+ as is, 1 URL-encoded, 1 JSON-escaped, 1 base64, 1 hex\)$/m);
    expect(report).toContain('    events.txt: 1\n    pods/setup/main.log: 5\n');
    expect(report).toMatch(/^ {2}uyuni\/sa-token\/token: 1 time in 1 file/m);
    expect(report).toMatch(/^ {2}uyuni\/uyuni-ca\/tls\.key: \d+ times/m);
    expect(report).toContain('  uyuni/db-credentials/username: not a secret');
    expect(report).toContain('  uyuni/uyuni-ca/tls.crt: not a secret');
    expect(report).toContain('  uyuni/report-credentials/pin: shorter than 8 characters');
    expect(report).toMatch(/^ {2}password=…: 1 time in 1 file\n {4}pods\/setup\/main\.log: 1$/m);
    expect(report).toMatch(/^ {2}--password …: 2 times/m);
    expect(report).toMatch(/^ {2}Authorization: …: 1 time/m);
    expect(report).toMatch(/^ {2}Bearer <token>: 1 time/m);
    for (const s of [PASSWORD, TOKEN, KEY_BODY[0], 'hunter2']) expect(report.includes(s)).toBe(false);
  });
});
