# shellcheck shell=sh
# A backup's record of what it was taken with (record.json beside manifest.json; the type is
# src/model/backup-record.ts): each pod of the server as the API reported it just before the
# server stopped (its containers' image and imageID, the digest the node ran), the synthesized
# configuration the backup plan was made from, and the server's identity as the runtime keeps it
# (key `identity` of ConfigMap uyuni-cdk-history). Written and read here only, by one Python
# program (the server image has python3: docs/backup.md), three ways:
#
#   record_py write OUT        (Job uyuni-backup-record, server running) lists the pods of
#                              POD_SELECTOR in NAMESPACE and reads the identity through the API
#                              (lib/kube-api.sh's service account: API_URL, SA_DIR), takes
#                              CONFIGURATION (JSON), writes OUT whole or not at all;
#   record_py check FILE       (uyuni-backup) FILE is a record of this format, else fails;
#   record_py compare DIR LISTED  (uyuni-restore-check) the record of backup DIR (LISTED: whether
#                              its manifest lists one) against CONFIGURATION and CURRENT_IMAGES
#                              (JSON: pod component -> {"image", "key"}), without the top-level
#                              keys of IGNORED; prints the facts of the decision (record_ok,
#                              record_refusal, the differences, and restore_image.<component>:
#                              the image each component runs after the restore, the recorded
#                              one by digest unless allowed otherwise), with ALLOW_NEWER_IMAGES,
#                              ALLOW_CONFIG_CHANGES and ALLOW_MISSING_RECORD (true|false). A
#                              record that is there but cannot be read fails: it is never taken
#                              for a missing one.
#
# Upstream: `mgradm backup create` saves each service's image (podman save) and its systemd
# configuration with the server's environment file (uyuni-tools mgradm/cmd/backup/create/
# create.go, systemd_utils.go since e19fb763); `mgradm backup restore` loads those images and
# that configuration back (restore/restore.go), so a restore runs what the backup was taken
# with. Inlined by synth (readScript in src/constructs/script-job.ts); sourced from beside the
# script when a test runs the file.

# Where uyuni-backup-record leaves the record on the backup claim for uyuni-backup, which moves it
# into the new backup (every run writes it afresh before the server stops).
# shellcheck disable=SC2034 # used by the scripts that include this
record_pending=.record.json

record_py() {
  me_name=${me:-uyuni-backup-record} python3 - "$@" <<'PYTHON'
import datetime, json, os, re, ssl, sys, urllib.error, urllib.parse, urllib.request

FORMAT = 1
ME = os.environ.get("me_name") or "uyuni-backup-record"

def die(msg):
    sys.stderr.write("%s: %s\n" % (ME, msg))
    sys.exit(1)

def one_line(v):
    return " ".join(str(v).split())

def repo_of(image):
    """The image reference without tag or digest."""
    ref = image.split("@", 1)[0]
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    return ref[:colon] if colon > slash else ref

DIGEST = re.compile(r"^(?:docker-pullable://)?([^@]+)@(sha256:[0-9a-f]{64})$")

def pinned(image, image_id):
    """`<repo>@sha256:...` of a container, or None when its imageID is no registry digest
    (a bare config id, `docker://sha256:...`, empty: nothing to pull it by)."""
    m = DIGEST.match(image_id or "")
    return "%s@%s" % (repo_of(image), m.group(2)) if m else None

def check(rec, where):
    ok = (isinstance(rec, dict) and rec.get("format") == FORMAT and isinstance(rec.get("takenAt"), str)
          and isinstance(rec.get("pods"), list) and isinstance(rec.get("configuration"), dict)
          and "planIdentity" in rec and (rec["planIdentity"] is None or isinstance(rec["planIdentity"], dict)))
    if ok:
        for p in rec["pods"]:
            if not (isinstance(p, dict) and isinstance(p.get("component"), str) and isinstance(p.get("containers"), list)
                    and all(isinstance(c, dict) and isinstance(c.get("image"), str) and isinstance(c.get("imageID"), str) for c in p["containers"])):
                ok = False
    if not ok:
        die("%s is damaged: not a record of format %d (format, takenAt, pods, configuration, planIdentity): refused" % (where, FORMAT))
    return rec

def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
    except (OSError, ValueError) as e:
        die("%s is damaged: %s: refused" % (path, one_line(e)))
    return check(rec, path)

def api_get(path):
    base = os.environ.get("API_URL", "https://kubernetes.default.svc").rstrip("/")
    sa = os.environ.get("SA_DIR", "/var/run/secrets/kubernetes.io/serviceaccount")
    try:
        with open(os.path.join(sa, "token"), encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as e:
        die("no service account token in %s: %s" % (sa, one_line(e)))
    ctx = None
    if base.startswith("https:"):
        ca = os.path.join(sa, "ca.crt")
        ctx = ssl.create_default_context(cafile=ca if os.path.exists(ca) else None)
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token, "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return 200, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, None
    except (urllib.error.URLError, OSError, ValueError) as e:
        die("cannot read %s from the API at %s: %s" % (path, base, one_line(e)))

def write(out):
    ns = os.environ["NAMESPACE"]
    try:
        configuration = json.loads(os.environ["CONFIGURATION"])
    except (KeyError, ValueError):
        die("CONFIGURATION is not the configuration as JSON")
    q = urllib.parse.urlencode({"labelSelector": os.environ["POD_SELECTOR"]})
    status, body = api_get("/api/v1/namespaces/%s/pods?%s" % (ns, q))
    if status != 200:
        die("listing the server's pods: HTTP %d%s" % (status, " (Role uyuni-backup-record: pods list)" if status == 403 else ""))
    pods = []
    for p in sorted(body.get("items") or [], key=lambda p: p["metadata"]["name"]):
        statuses = {s.get("name"): s for s in (p.get("status") or {}).get("containerStatuses") or []}
        containers = []
        for c in (p.get("spec") or {}).get("containers") or []:
            s = statuses.get(c["name"]) or {}
            containers.append({"name": c["name"], "image": c.get("image", ""), "imageID": s.get("imageID") or ""})
        pods.append({"pod": p["metadata"]["name"], "component": (p["metadata"].get("labels") or {}).get("app.kubernetes.io/component", ""),
                     "phase": (p.get("status") or {}).get("phase", ""), "containers": containers})
    cm = os.environ.get("HISTORY_CONFIGMAP", "uyuni-cdk-history")
    status, body = api_get("/api/v1/namespaces/%s/configmaps/%s" % (ns, cm))
    identity = None
    if status == 200:
        text = ((body or {}).get("data") or {}).get("identity")
        if text:
            try:
                identity = json.loads(text)
            except ValueError:
                identity = None
            if not isinstance(identity, dict):
                die("the server's identity (ConfigMap %s key identity) is damaged: uyuni-cdk repair-record repairs it; no backup taken" % cm)
    elif status != 404:
        die("reading ConfigMap %s: HTTP %d" % (cm, status))
    rec = {"format": FORMAT, "takenAt": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "namespace": ns, "pods": pods, "configuration": configuration, "planIdentity": identity}
    check(rec, "the record")
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, out)
    for p in pods:
        for c in p["containers"]:
            print("%s: %s %s: %s (%s)" % (ME, p["pod"], c["name"], c["image"], c["imageID"] or "no imageID"))
    print("%s: recorded %d pods, the configuration and %s" % (ME, len(pods), "the server's identity" if identity else "no identity (none recorded yet)"))
    print("record_pods=%d" % len(pods))

def flatten(v, prefix, out):
    if isinstance(v, dict) and v:
        for k in sorted(v):
            flatten(v[k], "%s.%s" % (prefix, k) if prefix else k, out)
    else:
        out[prefix] = json.dumps(v, sort_keys=True)
    return out

def compare(directory, listed):
    flag = lambda n: os.environ.get(n, "false") == "true"
    facts = []
    path = os.path.join(directory, "record.json")
    if listed != "true":
        if os.path.lexists(path):
            die("backup %s: record.json is there but its manifest does not list it: the backup was changed or damaged: refused" % os.path.basename(directory))
        facts.append(("backup_record", "missing"))
        if flag("ALLOW_MISSING_RECORD"):
            print("%s: backup %s has no record of what it was taken with: restored with this configuration and its images (restore.allowMissingRecord)" % (ME, os.path.basename(directory)))
            facts += [("record_ok", "true")]
            images = json.loads(os.environ.get("CURRENT_IMAGES") or "{}")
            facts += [("restore_image.%s" % c, images[c]["image"]) for c in sorted(images)]
        else:
            facts += [("record_ok", "false"), ("record_refusal", "backup %s has no record of the images and configuration it was taken with "
                       "(made before backups recorded them): set restore.allowMissingRecord: true to restore it with this configuration and its images" % os.path.basename(directory))]
        for k, v in facts:
            print("%s=%s" % (k, one_line(v)))
        return
    rec = load(path)
    try:
        current = json.loads(os.environ["CONFIGURATION"])
        images = json.loads(os.environ["CURRENT_IMAGES"])
    except (KeyError, ValueError):
        die("CONFIGURATION and CURRENT_IMAGES must be JSON")
    ignored = set(os.environ.get("IGNORED", "").split())
    facts.append(("backup_record", "present"))
    facts.append(("record_taken_at", rec["takenAt"]))
    ident = rec["planIdentity"]
    if ident:
        facts.append(("record_identity", "%s %s:%s tls %s (plan %s, run %s)" % (ident.get("fqdn"), ident.get("product"), ident.get("imageGeneration"),
                                                                                ident.get("tlsMode"), ident.get("plan"), ident.get("run"))))
    # Images: the restore runs, for each component this configuration runs, the image the backup
    # recorded, by digest (restore_image.<component>); the configured one only with
    # ALLOW_NEWER_IMAGES. Each difference is said; what cannot be pinned refuses without the flag.
    newer = flag("ALLOW_NEWER_IMAGES")
    name_of = lambda image: repo_of(image).rsplit("/", 1)[-1]
    image_diffs, image_refusals, run = [], [], {}
    for comp in sorted(images):
        want = images[comp]
        mine = [c for p in rec["pods"] if p["component"] == comp for c in p["containers"]]
        # its containers of this image (by name: the registry may have moved), else its only one
        recorded = [c for c in mine if name_of(c["image"]) == name_of(want["image"])] or (mine if len({c["name"] for c in mine}) == 1 else [])
        seen = {}
        for c in recorded:
            seen.setdefault(pinned(c["image"], c["imageID"]) or "", c)
        for i, (pin, c) in enumerate(sorted(seen.items()), 1):
            facts.append(("record_image.%s%s" % (comp, "" if len(seen) == 1 else ".%d" % i), "%s %s" % (c["image"], c["imageID"] or "-")))
        pins = [x for x in seen if x]
        if not recorded:
            if comp in ("server", "db"):
                image_refusals.append("%s: the backup recorded no running %s pod: its image cannot be pinned" % (comp, comp))
            else:
                image_diffs.append("%s: not running when the backup was taken: runs the configured %s" % (comp, want["image"]))
            run[comp] = want["image"]
        elif "" in seen or len(pins) != 1:
            why = ("the backup recorded %s without a registry digest (imageID %s): it cannot be pinned" % (seen[""]["image"], seen[""]["imageID"] or "none")
                   if "" in seen else "the backup recorded %d images (%s): it cannot be told which to pin" % (len(pins), ", ".join(pins)))
            image_refusals.append("%s: %s" % (comp, why))
            run[comp] = want["image"]
        else:
            pin = pins[0]
            digest = pin.split("@", 1)[1]
            # the same digest pinned in the configuration (another registry, a mirror): that one
            run[comp] = want["image"] if newer or want["image"].endswith("@" + digest) else pin
            if want["image"].endswith("@" + digest) and pin != want["image"]:
                image_diffs.append("%s: recorded %s, configured %s: the same digest, runs the configured one" % (comp, pin, want["image"]))
            elif pin != want["image"]:
                image_diffs.append("%s: recorded %s (%s), configured %s: %s" % (comp, pin, seen[pin]["image"], want["image"],
                                   "runs the configured one (restore.allowNewerImages)" if newer else "runs the recorded one"))
    for i, d in enumerate(image_diffs + image_refusals, 1):
        facts.append(("record_image_diff.%d" % i, d))
    facts.append(("record_images_pinned", "false" if image_refusals or (newer and image_diffs) else "true"))
    # The configuration, path by path.
    strip = lambda c: {k: v for k, v in c.items() if k not in ignored}
    # A digest pinned under images.components is the image comparison's, above, not a difference.
    pin_key = re.compile(r"^images\.components\.[A-Za-z]+\.digest$")
    unpinned = lambda flat: {k: v for k, v in flat.items() if not pin_key.match(k)}
    was, now = unpinned(flatten(strip(rec["configuration"]), "", {})), unpinned(flatten(strip(current), "", {}))
    config_diffs = ["%s: %s -> %s" % (k, was.get(k, "(absent)"), now.get(k, "(absent)")) for k in sorted(set(was) | set(now)) if was.get(k) != now.get(k)]
    for i, d in enumerate(config_diffs, 1):
        facts.append(("record_config_diff.%d" % i, d))
    facts.append(("record_config_same", "false" if config_diffs else "true"))
    refusals = []
    if image_refusals and not newer:
        refusals.append("the images the backup was taken with cannot all be pinned (%s): set restore.allowNewerImages: true to restore with the configured ones"
                        % "; ".join(image_refusals))
    if config_diffs and not flag("ALLOW_CONFIG_CHANGES"):
        refusals.append("this configuration differs from the one the backup was taken with (%d differences: facts record_config_diff.*): "
                        "synthesize the restore with the recorded one, or set restore.allowConfigChanges: true" % len(config_diffs))
    facts.append(("record_ok", "false" if refusals else "true"))
    if refusals:
        facts.append(("record_refusal", "; ".join(refusals)))
    else:
        facts += [("restore_image.%s" % c, run[c]) for c in sorted(run)]
    print("%s: backup %s was taken at %s%s" % (ME, os.path.basename(directory), rec["takenAt"], " by " + dict(facts)["record_identity"] if ident else ""))
    for d in image_diffs + image_refusals:
        print("%s: image: %s" % (ME, d))
    for d in config_diffs:
        print("%s: configuration: %s%s" % (ME, d, " (restore.allowConfigChanges)" if flag("ALLOW_CONFIG_CHANGES") else ""))
    for k, v in facts:
        print("%s=%s" % (k, one_line(v)))

mode = sys.argv[1] if len(sys.argv) > 1 else ""
if mode == "write" and len(sys.argv) == 3:
    write(sys.argv[2])
elif mode == "check" and len(sys.argv) == 3:
    load(sys.argv[2])
elif mode == "compare" and len(sys.argv) == 4:
    compare(sys.argv[2], sys.argv[3])
else:
    die("usage: write OUT | check FILE | compare DIR LISTED")
PYTHON
}
