# uyuni-import-secrets: turns what uyuni-data-sync fetched from the old server into the Secrets
# the new server needs, in the cluster, so no password or key ever passes through dist/, the
# runtime or a log: the database credentials the migrated databases keep (Secrets db-credentials
# and reportdb-credentials, from MIGRATION_DIR/secrets) and, with IMPORT_CA=true, the old CA
# (Secret uyuni-ca, kubernetes.io/tls): the encrypted RHN-ORG-PRIVATE-SSL-KEY is decrypted with
# the CA password (CA_PASSWORD, from the user's Secret) into memory only. A Secret that exists
# already is left as it is (the user's wins). Talks to the API with the pod's service account.
# Input: MIGRATION_DIR (the migration-data claim), NAMESPACE, IMPORT_CA (true|false),
#   CA_PASSWORD (with IMPORT_CA=true), SECRET_LABELS (JSON object of labels for the Secrets),
#   API_URL (default https://kubernetes.default.svc), SA_DIR (default
#   /var/run/secrets/kubernetes.io/serviceaccount: token and ca.crt).
set -eu
: "${MIGRATION_DIR:?}" "${NAMESPACE:?}" "${IMPORT_CA:?}"
me=uyuni-import-secrets

fail() {
  echo "$me: $*" >&2
  exit 1
}
case $IMPORT_CA in true | false) ;; *) fail "IMPORT_CA must be true or false, not '$IMPORT_CA'" ;; esac

# shellcheck source-path=SCRIPTDIR source=lib/kube-api.sh
. "$(dirname "$0")/lib/kube-api.sh"

# create_secret NAME TYPE FILE...: FILE is key=path; creates the Secret unless it exists.
create_secret() {
  name=$1 type=$2
  shift 2
  secret_missing "$name" || return 0
  data=''
  for item in "$@"; do
    data="$data${data:+,}\"${item%%=*}\":\"$(b64 <"${item#*=}")\""
  done
  if post_secret "$name" "$type" "$data"; then echo "$me: created Secret $name"; fi
}

# The value of a key in the secrets file (key=value lines, as uyuni-data-sync writes them).
secret_value() {
  sed -n "s/^$1=//p" "$MIGRATION_DIR/secrets" | tail -n 1
}

[ -f "$MIGRATION_DIR/secrets" ] || fail "$MIGRATION_DIR/secrets is missing: did uyuni-data-sync run?"
for pair in db:db_user:db_password reportdb:report_db_user:report_db_password; do
  prefix=${pair%%:*} rest=${pair#*:}
  user_key=${rest%%:*} pass_key=${rest#*:}
  secret_value "$user_key" | tr -d '\n' >"$work/username"
  secret_value "$pass_key" | tr -d '\n' >"$work/password"
  { [ -s "$work/username" ] && [ -s "$work/password" ]; } || fail "the old rhn.conf had no $user_key / $pass_key"
  create_secret "$prefix-credentials" kubernetes.io/basic-auth "username=$work/username" "password=$work/password"
done

if [ "$IMPORT_CA" = true ]; then
  ca_dir=$MIGRATION_DIR/ca
  { [ -f "$ca_dir/RHN-ORG-TRUSTED-SSL-CERT" ] && [ -f "$ca_dir/RHN-ORG-PRIVATE-SSL-KEY" ]; } \
    || fail "no CA in $ca_dir: the old server has no /root/ssl-build (third-party certificates?): use tls.mode third-party"
  : "${CA_PASSWORD:?the CA password is required: create Secret uyuni-ca-password (key password)}"
  export CA_PASSWORD
  if ! openssl pkey -in "$ca_dir/RHN-ORG-PRIVATE-SSL-KEY" -passin env:CA_PASSWORD -out "$work/ca.key" 2>"$work/openssl.err"; then
    fail "cannot decrypt the old CA key with the CA password in Secret uyuni-ca-password: $(head -n 1 "$work/openssl.err")"
  fi
  # The key must be the certificate's: a wrong pair would issue certificates nobody trusts.
  cert_pub=$(openssl x509 -in "$ca_dir/RHN-ORG-TRUSTED-SSL-CERT" -noout -pubkey) || fail "the old CA certificate cannot be read"
  key_pub=$(openssl pkey -in "$work/ca.key" -pubout)
  [ "$cert_pub" = "$key_pub" ] || fail "the old CA key does not belong to RHN-ORG-TRUSTED-SSL-CERT"
  create_secret uyuni-ca kubernetes.io/tls "tls.crt=$ca_dir/RHN-ORG-TRUSTED-SSL-CERT" "tls.key=$work/ca.key"
fi
echo "$me: done"
