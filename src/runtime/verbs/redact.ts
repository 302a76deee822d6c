/**
 * The scrubber of the support bundle (src/runtime/verbs/support.ts): replaces secret values, as whole
 * tokens, in each form they are printed in, and credentials that common patterns give away, and
 * counts what it replaced where, for the bundle's `redactions.txt`.
 *
 * What is a secret: the values of Secret keys that hold one (passwords, keys, tokens, private
 * keys); not the keys whose names say they hold a user name, a database or host name, and not
 * certificates (public). A value shorter than MIN_SECRET_LENGTH is not scrubbed: it would scrub
 * ordinary words (`admin`, `pgsql`), and `redactions.txt` says so. A value is replaced only as a
 * whole token: `postgres` as a password does not turn `postgresql` into `<redacted>ql`.
 */
export const REDACTED = '<redacted>';
/** Shorter values would scrub ordinary words (`admin`, `pgsql`, `uyuni`); `redactions.txt` names the keys left. */
export const MIN_SECRET_LENGTH = 8;

/** Keys whose names say they hold no secret: user, database, host names, ports, e-mail addresses. */
const NOT_SECRET_KEY = /^(?:[\w.-]*[-_.])?(?:user|username|login|name|db|database|dbname|host|hostname|port|email|mail)$/i;
const CERTIFICATE = /-----BEGIN CERTIFICATE-----/;
const PRIVATE = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

/** One key of a Secret (or a kubeconfig credential): where it is, for `redactions.txt`, never its value. */
export interface SecretValue {
  /** `namespace/name/key`, or `kubeconfig user <name>: token`. */
  readonly ref: string;
  readonly key: string;
  readonly value: string;
}

export type Kept = 'not secret' | 'short';

/** Whether a Secret key's value is scrubbed, and why not. */
export function classify(key: string, value: string): Kept | undefined {
  if (NOT_SECRET_KEY.test(key)) return 'not secret';
  // a certificate (tls.crt, ca.crt) is public; a bundle with its private key is not
  if (CERTIFICATE.test(value) && !PRIVATE.test(value)) return 'not secret';
  if (value.trim().length < MIN_SECRET_LENGTH) return 'short';
  return undefined;
}

const hex = (v: string) => Buffer.from(v).toString('hex');
const b64 = (v: string) => Buffer.from(v).toString('base64');

/** The forms a value is printed in, each with its name for `redactions.txt`. */
function formsOf(value: string): Array<[form: string, text: string]> {
  const forms: Array<[string, string]> = [];
  const add = (form: string, text: string) => {
    if (text.length >= MIN_SECRET_LENGTH && !forms.some(([, t]) => t === text)) forms.push([form, text]);
  };
  // the Secret's own data field, as `kubectl get secret -o yaml` prints it
  add('base64', b64(value));
  // a value read from a file ends with a newline a log does not repeat
  value = value.trim();
  add('as is', value);
  add('JSON-escaped', JSON.stringify(value).slice(1, -1));
  add('URL-encoded', encodeURIComponent(value));
  add('URL-encoded', encodeURIComponent(value).replace(/%20/g, '+'));
  add('URL-encoded', encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  add('base64', b64(value));
  add('base64', b64(value).replace(/=+$/, ''));
  add('base64', Buffer.from(value).toString('base64url'));
  add('hex', hex(value));
  add('hex', hex(value).toUpperCase());
  // a key or certificate bundle appears line by line too (PEM bodies: 64 characters a line)
  if (value.includes('\n')) for (const line of value.split('\n')) if (!/^-----(BEGIN|END) /.test(line.trim())) add('line of it', line.trim());
  return forms;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const WORD = /[A-Za-z0-9_]/;
/** A value as a whole token: not inside a longer word (`postgres` is not replaced in `postgresql`). */
const token = (text: string) => `${WORD.test(text[0]) ? '(?<![A-Za-z0-9_])' : ''}${escape(text)}${WORD.test(text[text.length - 1]) ? '(?![A-Za-z0-9_])' : ''}`;

/** Credentials in any text, whether or not they are a known Secret's value. */
const PATTERNS: ReadonlyArray<{ name: string; re: RegExp; keep: (m: RegExpExecArray) => string }> = [
  {
    name: 'PEM private key block',
    re: /(-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----)[\s\S]*?(-----END \2-----)/g,
    keep: (m) => `${m[1]}\n${REDACTED}\n${m[3]}`,
  },
  {
    name: 'Authorization: …',
    re: /(\bauthorization["']?[ \t]*[:=][ \t]*["']?)((?:basic|bearer|digest|negotiate|token)[ \t]+)?([^\s"',;]+)/gi,
    keep: (m) => `${m[1]}${m[2] ?? ''}${REDACTED}`,
  },
  {
    name: 'Bearer <token>',
    re: /(\bbearer[ \t]+)([A-Za-z0-9\-._~+/]{8,}=*)/gi,
    keep: (m) => `${m[1]}${REDACTED}`,
  },
  {
    name: '--password …',
    re: /((?<![\w-])--?[\w-]{0,64}(?:password|passwd|token|secret)(?:=|[ \t]+))(?!-)("[^"]*"|'[^']*'|[^\s"']+)/gi,
    keep: (m) => `${m[1]}${REDACTED}`,
  },
  {
    name: 'password=…',
    re: /((?:password|passwd|secret|token|api[-_]?key)["']?[ \t]*=[ \t]*)("[^"]*"|'[^']*'|[^\s"'&;,]+)/gi,
    keep: (m) => `${m[1]}${REDACTED}`,
  },
  {
    name: 'password: …',
    re: /((?:password|passwd)["']?[ \t]*:[ \t]*)("[^"]*"|'[^']*'|[^\s"',;]+)/gi,
    keep: (m) => `${m[1]}${REDACTED}`,
  },
];

/** A pattern's credential that is already replaced (`password: <redacted> (24 bytes)`) or none at all. */
const alreadyScrubbed = (m: RegExpExecArray) => {
  const value = m[m.length - 1] ?? '';
  return value.replace(/^["']|["']$/g, '') === '' || value.includes(REDACTED);
};

/** How often something was replaced, by file. */
export class Tally {
  readonly byFile = new Map<string, number>();
  readonly byForm = new Map<string, number>();
  total = 0;

  add(file: string, form: string | undefined, n = 1): void {
    this.total += n;
    this.byFile.set(file, (this.byFile.get(file) ?? 0) + n);
    if (form) this.byForm.set(form, (this.byForm.get(form) ?? 0) + n);
  }
}

/** Replaces secret values (whole tokens, every form) and credential patterns, and counts each. */
export class Redactor {
  /** Per Secret key scrubbed, what was replaced; keys left as they are, and why. */
  readonly scrubbed = new Map<string, Tally>();
  readonly kept = new Map<string, Kept>();
  readonly patterns = new Map<string, Tally>(PATTERNS.map((p) => [p.name, new Tally()]));
  /** Each form's text: which keys' values it is, and which form; longest first (a value that contains another is replaced whole). */
  private readonly owners = new Map<string, Array<{ ref: string; form: string }>>();
  private texts: string[] = [];

  constructor(values: Iterable<SecretValue>) {
    for (const { ref, key, value } of values) {
      const kept = classify(key, value);
      if (kept) {
        if (!this.scrubbed.has(ref)) this.kept.set(ref, kept);
        continue;
      }
      this.kept.delete(ref);
      if (!this.scrubbed.has(ref)) this.scrubbed.set(ref, new Tally());
      for (const [form, text] of formsOf(value)) {
        const owners = this.owners.get(text) ?? [];
        if (!owners.some((o) => o.ref === ref)) owners.push({ ref, form });
        this.owners.set(text, owners);
      }
    }
    this.texts = [...this.owners.keys()].sort((a, b) => b.length - a.length);
  }

  /** `text` without secrets; `file` is where it goes, for the counts. */
  scrub(text: string, file: string): string {
    // one expression of the forms the text holds at all (a plain search each): a log of a MiB is not matched against every form at every position
    const present = this.texts.filter((t) => text.includes(t));
    let out = present.length
      ? text.replace(new RegExp(present.map(token).join('|'), 'g'), (found) => {
        for (const o of this.owners.get(found) ?? []) this.scrubbed.get(o.ref)?.add(file, o.form);
        return REDACTED;
      })
      : text;
    for (const p of PATTERNS) {
      out = out.replace(p.re, (...args) => {
        const m = args.slice(0, -2) as unknown as RegExpExecArray;
        if (alreadyScrubbed(m)) return m[0];
        this.patterns.get(p.name)?.add(file, undefined);
        return p.keep(m);
      });
    }
    return out;
  }

  /** `redactions.txt`: what was scrubbed how often, in which files; never a value. */
  report(extra: readonly string[] = []): string {
    const lines = [
      'What the scrubber replaced with <redacted>, in every text of this bundle but plan/ (the plan holds no secret',
      'by construction). Values are replaced as whole tokens, as they are and URL-encoded, JSON-escaped, base64, hex',
      'and line by line; never a value shorter than 8 characters, a user, database or host name, or a certificate.',
      ...extra,
      '',
      'Secret keys scrubbed (namespace/name/key):',
    ];
    const files = (t: Tally) => [...t.byFile].sort(([a], [b]) => a.localeCompare(b)).map(([f, n]) => `    ${f}: ${n}`);
    if (!this.scrubbed.size) lines.push('  (none)');
    for (const [ref, t] of [...this.scrubbed].sort(([a], [b]) => a.localeCompare(b))) {
      const forms = [...t.byForm].map(([f, n]) => `${n} ${f}`).join(', ');
      lines.push(`  ${ref}: ${t.total} time${t.total === 1 ? '' : 's'}${t.total ? ` in ${t.byFile.size} file${t.byFile.size === 1 ? '' : 's'} (${forms})` : ''}`, ...files(t));
    }
    const kept = [...this.kept].sort(([a], [b]) => a.localeCompare(b));
    lines.push('', 'Secret keys kept as they are:');
    if (!kept.length) lines.push('  (none)');
    for (const [ref, why] of kept) lines.push(`  ${ref}: ${why === 'short' ? `shorter than ${MIN_SECRET_LENGTH} characters (it would scrub ordinary words)` : 'not a secret (a user, database or host name, or a certificate)'}`);
    lines.push('', 'Patterns:');
    for (const [name, t] of this.patterns) lines.push(`  ${name}: ${t.total} time${t.total === 1 ? '' : 's'}${t.total ? ` in ${t.byFile.size} file${t.byFile.size === 1 ? '' : 's'}` : ''}`, ...files(t));
    return `${lines.join('\n')}\n`;
  }
}
