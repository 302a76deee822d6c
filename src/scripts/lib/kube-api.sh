# shellcheck shell=sh
# The Kubernetes API from a step script, with the pod's service account: a private work
# directory (removed on exit), `request`, which prints the HTTP status and leaves the body in
# $work/body, and the Secret steps both secret scripts take (secret_missing, post_secret).
# Inputs: NAMESPACE, API_URL (default https://kubernetes.default.svc), SA_DIR (default
# /var/run/secrets/kubernetes.io/serviceaccount: token and ca.crt), SECRET_LABELS (JSON object
# of labels for the Secrets). Needs $me (the script's name in messages) and fail. Inlined by synth
# (readScript in src/constructs/script-job.ts); sourced from beside the script when a test runs
# the file.
# shellcheck disable=SC2154 # $me is set by the script that includes this
api=${API_URL:-https://kubernetes.default.svc}
sa=${SA_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}
labels=${SECRET_LABELS:-"{}"}
case $NAMESPACE in '' | *[!a-z0-9-]*) fail "NAMESPACE is not a namespace name: '$NAMESPACE'" ;; esac

# Nothing below may end up on disk in clear: work in a private directory, removed on exit.
umask 077
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# curl's arguments: the token never appears on a command line (ps) but in a config file.
{
  printf 'header = "Authorization: Bearer %s"\n' "$(cat "$sa/token")"
  printf 'header = "Content-Type: application/json"\n'
  if [ -f "$sa/ca.crt" ]; then printf 'cacert = "%s"\n' "$sa/ca.crt"; fi
} >"$work/curl.conf"

# Prints the HTTP status of a request; the body goes to $work/body.
request() {
  curl -sS -K "$work/curl.conf" -o "$work/body" -w '%{http_code}' "$@"
}

# Standard input in base64, on one line.
b64() {
  base64 | tr -d '\n'
}

# secret_missing NAME: true when Secret NAME does not exist; false, saying so, when it does (it is
# never changed). Any other answer fails; a 403 names the Role $role, when the script sets one.
secret_missing() {
  status=$(request "$api/api/v1/namespaces/$NAMESPACE/secrets/$1") || fail "cannot reach the API at $api"
  case $status in
    200) echo "$me: Secret $1 exists already: kept as it is"; return 1 ;;
    404) return 0 ;;
  esac
  if [ "$status" = 403 ] && [ -n "${role:-}" ]; then fail "reading Secret $1: HTTP 403: the service account may not get it (Role $role)"; fi
  fail "reading Secret $1: HTTP $status: $(head -c 300 "$work/body")"
}

# post_secret NAME TYPE DATA: creates Secret NAME of TYPE with the labels, DATA its data members
# (`"key":"<base64>",...`). True when created; false, saying so, when it was created meanwhile
# (409: kept as it is). Any other answer fails. The request body is a private file, removed after.
post_secret() {
  printf '{"apiVersion":"v1","kind":"Secret","type":"%s","metadata":{"name":"%s","namespace":"%s","labels":%s},"data":{%s} }' \
    "$2" "$1" "$NAMESPACE" "$labels" "$3" >"$work/secret.json"
  status=$(request -X POST --data-binary "@$work/secret.json" "$api/api/v1/namespaces/$NAMESPACE/secrets") || fail "cannot reach the API at $api"
  rm -f "$work/secret.json"
  case $status in
    201) return 0 ;;
    409) echo "$me: Secret $1 was created meanwhile: kept as it is"; return 1 ;;
    *) fail "creating Secret $1: HTTP $status: $(head -c 300 "$work/body")" ;;
  esac
}
