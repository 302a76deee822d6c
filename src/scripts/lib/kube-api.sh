# shellcheck shell=sh
# The Kubernetes API from a step script, with the pod's service account: a private work
# directory (removed on exit) and `request`, which prints the HTTP status and leaves the body in
# $work/body. Needs $sa (the service account directory). Inlined by synth (readScript in
# src/constructs/script-job.ts); sourced from beside the script when a test runs the file.
# shellcheck disable=SC2154 # $sa is set by the script that includes this

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
