# uyuni-proxy-certs: Secret proxy-cert and ConfigMap uyuni-ca from the proxy's config tarball,
# in the cluster, as proxy-helm renders them itself (templates/cert.yaml @ 00f177a9, README @
# 00f177a9): proxy-cert (kubernetes.io/tls) from httpd.yaml's httpd.server_crt and
# httpd.server_key, uyuni-ca (key ca.crt) from config.yaml's ca_crt. The server writes each field
# as an OpenSSL text dump followed by the PEM block; only the first PEM block is kept (the first
# certificate, the private key), as the chart's regexFind does. An object that exists and was not
# made here (no label app.kubernetes.io/managed-by: uyuni-cdk) is the user's and is never changed;
# one made here is replaced when the tarball holds something else. An object neither present nor
# in the tarball fails the Job with the command that creates it.
#
# Python, not sh: it runs in the proxy-httpd image, whose own configure script
# (uyuni-configure.py) reads these files with python3 and PyYAML, so both are there; the YAML is
# read as YAML (block or quoted scalars alike). No key is ever printed.
#
# Input (environment): CONFIG_FILE, HTTPD_FILE (the tarball's config.yaml and httpd.yaml),
# NAMESPACE, CERT_SECRET, CA_CONFIGMAP (the object names), OBJECT_LABELS (JSON object of labels
# for the objects), MANAGED_BY_LABEL, MANAGED_BY (the label that marks ours), API_URL (default
# https://kubernetes.default.svc), SA_DIR (default /var/run/secrets/kubernetes.io/serviceaccount:
# token and ca.crt).
import base64
import json
import os
import re
import ssl
import sys
import urllib.error
import urllib.request

import yaml

ME = 'uyuni-proxy-certs'


def pem_block(label):
    """A PEM block whose label matches the regular expression `label`, shortest first."""
    return re.compile(f'-----BEGIN {label}-----.*?-----END {label}-----', re.S)


CERTIFICATE = pem_block('CERTIFICATE')
PRIVATE_KEY = pem_block('[A-Z0-9 ]*PRIVATE KEY')


def fail(message):
    print(f'{ME}: {message}', file=sys.stderr)
    sys.exit(1)


def env(name, default=None):
    value = os.environ.get(name, default)
    if value is None or value == '':
        fail(f'{name} is not set')
    return value


NAMESPACE = env('NAMESPACE')
if not re.fullmatch(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?', NAMESPACE):
    fail(f"NAMESPACE is not a namespace name: '{NAMESPACE}'")
API = env('API_URL', 'https://kubernetes.default.svc').rstrip('/')
SA_DIR = env('SA_DIR', '/var/run/secrets/kubernetes.io/serviceaccount')
LABELS = json.loads(env('OBJECT_LABELS'))
MANAGED_BY_LABEL = env('MANAGED_BY_LABEL')
MANAGED_BY = env('MANAGED_BY')
with open(os.path.join(SA_DIR, 'token'), encoding='utf-8') as f:
    TOKEN = f.read().strip()
CA_FILE = os.path.join(SA_DIR, 'ca.crt')
CONTEXT = ssl.create_default_context(cafile=CA_FILE) if os.path.exists(CA_FILE) else None


def request(method, path, body=None):
    """(status, parsed body) of an API request with the service account's token."""
    data = json.dumps(body).encode('utf-8') if body is not None else None
    req = urllib.request.Request(f'{API}{path}', data=data, method=method, headers={
        'Authorization': f'Bearer {TOKEN}', 'Content-Type': 'application/json', 'Accept': 'application/json',
    })
    try:
        with urllib.request.urlopen(req, timeout=30, context=CONTEXT) as response:
            return response.status, json.loads(response.read() or b'{}')
    except urllib.error.HTTPError as e:
        text = e.read().decode('utf-8', 'replace')
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, {'message': text[:300]}
    except (urllib.error.URLError, OSError) as e:
        fail(f'cannot reach the API at {API}: {e}')


def load(path, what):
    """The YAML mapping of a tarball file ({} when it holds none)."""
    try:
        with open(path, encoding='utf-8') as f:
            data = yaml.safe_load(f)
    except OSError as e:
        fail(f'cannot read {what} ({path}): {e.strerror}')
    except yaml.YAMLError as e:
        fail(f'{what} is not YAML: {str(e).splitlines()[0]}')
    return data if isinstance(data, dict) else {}


def first(pattern, value):
    """The first PEM block of a field (the text dump before it dropped), or None."""
    if not isinstance(value, str):
        return None
    match = pattern.search(value)
    return f'{match.group(0)}\n' if match else None


def ensure(kind, name, data, source, command, secret_type=None):
    """Creates or refreshes one object; returns an error text when it can be neither found nor made."""
    plural = 'secrets' if kind == 'Secret' else 'configmaps'
    path = f'/api/v1/namespaces/{NAMESPACE}/{plural}'
    status, current = request('GET', f'{path}/{name}')
    if status not in (200, 404):
        fail(f'reading {kind} {name}: HTTP {status}: {current.get("message", "")[:300]}')
    if data is None:
        if status == 200:
            print(f'{ME}: {kind} {name} exists; the tarball has no {source}: kept as it is')
            return None
        return f'{kind} {name}: the tarball has no {source}; create it: {command}'
    wire = {k: base64.b64encode(v.encode('utf-8')).decode('ascii') for k, v in data.items()} if kind == 'Secret' else data
    obj = {'apiVersion': 'v1', 'kind': kind, 'metadata': {'name': name, 'namespace': NAMESPACE, 'labels': LABELS}, 'data': wire}
    if secret_type:
        obj['type'] = secret_type
    if status == 404:
        status, answer = request('POST', path, obj)
        if status == 201:
            print(f'{ME}: created {kind} {name} from the tarball\'s {source}')
        elif status == 409:
            print(f'{ME}: {kind} {name} was created meanwhile: kept as it is')
        else:
            fail(f'creating {kind} {name}: HTTP {status}: {answer.get("message", "")[:300]}')
        return None
    labels = (current.get('metadata') or {}).get('labels') or {}
    if labels.get(MANAGED_BY_LABEL) != MANAGED_BY:
        print(f'{ME}: {kind} {name} exists and is not made by {MANAGED_BY}: kept as it is')
        return None
    if current.get('data') == wire and (not secret_type or current.get('type') == secret_type):
        print(f'{ME}: {kind} {name} is up to date')
        return None
    obj['metadata']['resourceVersion'] = current['metadata'].get('resourceVersion')
    status, answer = request('PUT', f'{path}/{name}', obj)
    if status != 200:
        fail(f'replacing {kind} {name}: HTTP {status}: {answer.get("message", "")[:300]}')
    print(f'{ME}: replaced {kind} {name} with the tarball\'s {source}')
    return None


config = load(env('CONFIG_FILE'), 'config.yaml')
httpd_file = load(env('HTTPD_FILE'), 'httpd.yaml')
httpd = httpd_file.get('httpd') if isinstance(httpd_file.get('httpd'), dict) else {}
crt = first(CERTIFICATE, httpd.get('server_crt'))
key = first(PRIVATE_KEY, httpd.get('server_key'))
ca = first(CERTIFICATE, config.get('ca_crt'))

CERT_SECRET = env('CERT_SECRET')
CA_CONFIGMAP = env('CA_CONFIGMAP')
errors = [e for e in (
    ensure('Secret', CERT_SECRET, {'tls.crt': crt, 'tls.key': key} if crt and key else None,
           'httpd.server_crt and httpd.server_key (httpd.yaml)',
           f'kubectl -n {NAMESPACE} create secret tls {CERT_SECRET} --cert=<the proxy certificate> --key=<its key>',
           'kubernetes.io/tls'),
    ensure('ConfigMap', CA_CONFIGMAP, {'ca.crt': ca} if ca else None, 'ca_crt (config.yaml)',
           f'kubectl -n {NAMESPACE} create configmap {CA_CONFIGMAP} --from-file=ca.crt=<the CA certificate>'),
) if e]
for e in errors:
    print(f'{ME}: {e}', file=sys.stderr)
if errors:
    sys.exit(1)
print(f'{ME}: done')
