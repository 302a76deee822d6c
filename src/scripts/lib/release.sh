# shellcheck shell=sh
# The product and release of a server image or of its data, from its release file, read the same
# way by uyuni-inspect and uyuni-restore-check. Needs `me` (the script's name, for messages).

# The release of a *-release file: "Uyuni release 2025.10" gives 2025.10, "SUSE Manager
# release 5.0 (5.0.3)" gives 5.0.3 (the detailed version in parentheses wins).
release_of() {
  line=$(head -n 1 "$1")
  detail=$(printf '%s\n' "$line" | sed -n 's/^[^(]*(\([0-9][^)]*\)).*$/\1/p')
  if [ -n "$detail" ]; then
    printf '%s\n' "$detail"
  else
    printf '%s\n' "$line" | sed -n 's/^.*[Rr]elease[[:space:]]*\([0-9][^(]*\).*$/\1/p' | sed 's/[[:space:]]*$//'
  fi
}

# describe_release DIR PRODUCT_KEY RELEASE_KEY [HINT]: prints PRODUCT_KEY=uyuni|suse-manager and
# RELEASE_KEY=<release> for the release file in DIR, or says on stderr that DIR holds none (and HINT).
describe_release() {
  if [ -f "$1/uyuni-release" ]; then
    echo "$2=uyuni"
    echo "$3=$(release_of "$1/uyuni-release")"
  elif [ -f "$1/susemanager-release" ]; then
    echo "$2=suse-manager"
    echo "$3=$(release_of "$1/susemanager-release")"
  else
    echo "${me:?}: no release file in $1${4:+: $4}" >&2
  fi
}
