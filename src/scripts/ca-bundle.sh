# ca-bundle: an init container of the server pod during a CA rotation (dist/ssl-addca/), in the
# server image. It writes the CA bundles the server publishes and trusts while two CAs overlap:
# the running CA and the new one, as uyuni-tools' `mgradm ssl addca` appends the new CA to the
# CA secrets (mgradm/shared/podman/ssl.go appendCAToSecret @ c46f1238). Each certificate is
# written once, without blank lines; a certificate that is already in the bundle (the new CA
# given twice) is not added again. The pod's mounts show the bundles where the images read the
# CA (src/model/tls.ts CA_PATHS): the one clients download, and the one the server checks the
# database with.
# Input: BUNDLE_DIR (an emptyDir), CURRENT_CA (the running CA: uyuni-cert's ca.crt), CURRENT_DB_CA
#   (db-cert's ca.crt), NEXT_CA (the new CA's certificate). Output: $BUNDLE_DIR/ca.crt and
#   $BUNDLE_DIR/db-ca.crt.
set -eu
: "${BUNDLE_DIR:?}" "${CURRENT_CA:?}" "${CURRENT_DB_CA:?}" "${NEXT_CA:?}"

fail() {
  echo "ca-bundle: $*" >&2
  exit 1
}

# bundle OUT FILE...: the PEM certificates of the files, in order, each once.
bundle() {
  out=$1
  shift
  for f in "$@"; do
    grep -q -- '-----BEGIN CERTIFICATE-----' "$f" || fail "$f holds no PEM certificate"
  done
  awk '
    /-----BEGIN CERTIFICATE-----/ { cert = ""; inside = 1 }
    inside { cert = cert $0 "\n" }
    /-----END CERTIFICATE-----/ { inside = 0; if (!(cert in seen)) { seen[cert] = 1; printf "%s", cert } }
  ' "$@" >"$out.tmp"
  mv "$out.tmp" "$out"
  echo "ca-bundle: $out: $(grep -c -- '-----BEGIN CERTIFICATE-----' "$out") CA certificate(s)"
}

bundle "$BUNDLE_DIR/ca.crt" "$CURRENT_CA" "$NEXT_CA"
bundle "$BUNDLE_DIR/db-ca.crt" "$CURRENT_DB_CA" "$NEXT_CA"
