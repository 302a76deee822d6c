# uyuni-credentials: creates each credential Secret of the plan that is missing, with random
# passwords, in the cluster, so a GitOps tool (Argo CD, Flux) that applies dist/ without our
# runtime gets them too (gitops.credentials: job). A Secret that exists already is never read
# or changed: the user's, or an earlier run's, wins; a re-run changes nothing. No value is ever
# printed or passed on a command line; the request body is a private file, removed after the
# request. Talks to the API with the pod's service account (get and create Secrets, nothing else).
# Input: NAMESPACE, SECRETS (one Secret a line: `<name> <type> <key>=literal:<value> ...
#   <key>=random:<length>`, from the plan's requirements), SECRET_LABELS (JSON object of labels
#   for the Secrets), API_URL (default https://kubernetes.default.svc), SA_DIR (default
#   /var/run/secrets/kubernetes.io/serviceaccount: token and ca.crt).
set -eu
: "${NAMESPACE:?}" "${SECRETS:?}"
me=uyuni-credentials
role=uyuni-credentials

fail() {
  echo "$me: $*" >&2
  exit 1
}
[ -r /dev/urandom ] || fail "/dev/urandom cannot be read: no random values"

# shellcheck source-path=SCRIPTDIR source=lib/kube-api.sh
. "$(dirname "$0")/lib/kube-api.sh"

# LENGTH random characters of the runtime's alphabet (src/runtime/apply/requirements.ts: letters and
# digits, safe in URLs, shells and connection strings), from the kernel's CSPRNG. tr keeps only
# those bytes, so every character is equally likely.
random_value() {
  LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c "$1"
}

# create_secret NAME TYPE ITEM...: ITEM is key=literal:value or key=random:length. The random
# values are made only for a Secret that is missing.
create_secret() {
  name=$1 type=$2
  shift 2
  secret_missing "$name" || return 0
  data='' keys=''
  for item in "$@"; do
    key=${item%%=*} how=${item#*=}
    case $how in
      literal:*) value=${how#literal:} ;;
      random:*)
        value=$(random_value "${how#random:}")
        [ ${#value} -eq "${how#random:}" ] || fail "Secret $name: /dev/urandom gave too few characters"
        ;;
    esac
    data="$data${data:+,}\"$key\":\"$(printf '%s' "$value" | b64)\""
    keys="$keys${keys:+, }$key"
  done
  if post_secret "$name" "$type" "$data"; then echo "$me: created Secret $name (keys $keys)"; fi
}

# Every line is checked before the first request: a bad one creates nothing.
check_line() {
  case $1 in '' | *[!a-z0-9.-]*) fail "SECRETS: '$1' is not a Secret name" ;; esac
  case $2 in '' | *[!A-Za-z0-9./-]*) fail "SECRETS: Secret $1: '$2' is not a Secret type" ;; esac
  shift 2
  [ $# -gt 0 ] || fail "SECRETS: Secret $1 has no keys"
  for item in "$@"; do
    key=${item%%=*} how=${item#*=}
    case $key in '' | *[!A-Za-z0-9._-]*) fail "SECRETS: '$key' is not a Secret key" ;; esac
    case $how in
      literal:*[!A-Za-z0-9._@-]*) fail "SECRETS: the literal of key $key holds characters other than letters, digits, '.', '_', '@', '-'" ;;
      literal:*) ;;
      random:*[!0-9]* | random:) fail "SECRETS: key $key: random needs a length, not '${how#random:}'" ;;
      random:*) if [ "${how#random:}" -lt 1 ] || [ "${how#random:}" -gt 4096 ]; then fail "SECRETS: key $key: random length must be 1 to 4096"; fi ;;
      *) fail "SECRETS: key $key: '$how' is neither literal:<value> nor random:<length>" ;;
    esac
  done
}

# each_line FN: FN with the words of each non-empty line of SECRETS (split on blanks only, never
# globbed). Every line is checked before the first request, then each Secret is created.
set -f
each_line() {
  while read -r line; do
    [ -n "$line" ] || continue
    # shellcheck disable=SC2086
    "$1" $line
  done <<EOF
$SECRETS
EOF
}
each_line check_line
each_line create_secret
echo "$me: done"
