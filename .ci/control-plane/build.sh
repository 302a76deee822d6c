#!/usr/bin/env bash
# Builds (or reuses) the real control plane the cluster tests run against: kube-apiserver,
# kube-controller-manager, kube-scheduler and kubectl of one pinned Kubernetes version, and etcd,
# from the Go module proxy through the wrapper modules beside this script (go.mod and go.sum only).
#
# Prints the folder that holds the binaries on its last line of stdout (progress goes to stderr).
#
#   KUBEBUILDER_ASSETS=DIR   use the binaries in DIR (as `setup-envtest use` prints) and build nothing
#   UYUNI_CDK_CONTROL_PLANE_CACHE=DIR   where builds are cached
#                            (default ${XDG_CACHE_HOME:-~/.cache}/uyuni-cdk/control-plane)
#
# The cache key is the hash of both wrappers' go.mod and go.sum: a version bump builds anew, an
# unchanged checkout reuses the binaries (a cold build takes ~20 minutes on 2 cores; docs/testing.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl)

complete() { # DIR: every binary present and executable
  local b
  for b in "${bins[@]}"; do [ -x "$1/$b" ] || return 1; done
}

if [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
  if complete "$KUBEBUILDER_ASSETS"; then
    echo "control plane: using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS" >&2
    echo "$KUBEBUILDER_ASSETS"
    exit 0
  fi
  echo "control plane: KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS lacks one of: ${bins[*]}" >&2
  exit 2
fi

pinned() { # MODULE GO.MOD: the version a wrapper requires (a single line or inside the block)
  awk -v m="$1" '($1 == m && $2 ~ /^v/) { print $2; exit } ($1 == "require" && $2 == m) { print $3; exit }' "$2"
}
k8s_version=$(pinned k8s.io/kubernetes "$here/kubernetes/go.mod")
etcd_version=$(pinned go.etcd.io/etcd/server/v3 "$here/etcd/go.mod")
[ -n "$k8s_version" ] && [ -n "$etcd_version" ] || { echo "control plane: cannot read the pinned versions from the wrappers' go.mod" >&2; exit 2; }
key=$(cat "$here"/kubernetes/go.mod "$here"/kubernetes/go.sum "$here"/etcd/go.mod "$here"/etcd/go.sum | sha256sum | cut -c1-12)
cache=${UYUNI_CDK_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/uyuni-cdk/control-plane}
out="$cache/$k8s_version-etcd-$etcd_version-$key"

if complete "$out"; then
  echo "control plane: reusing $out" >&2
  echo "$out"
  exit 0
fi

command -v go >/dev/null 2>&1 || { echo "control plane: no 'go' on PATH; install Go >= 1.24 or set KUBEBUILDER_ASSETS" >&2; exit 2; }
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false -mod=readonly"
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

# Version stamps as upstream's hack/lib/version.sh sets them; without them /version reports
# v0.0.0-master+$Format$.
minor=${k8s_version#v1.}; minor=${minor%%.*}
v=k8s.io/component-base/version
cv=k8s.io/client-go/pkg/version
ldflags="-s -w -X $v.gitVersion=$k8s_version -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
ldflags+=" -X $cv.gitVersion=$k8s_version -X $cv.gitMajor=1 -X $cv.gitMinor=$minor -X $cv.gitTreeState=clean"

echo "control plane: building etcd $etcd_version (once; cached in $out)" >&2
(cd "$here/etcd" && go build -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3)
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  echo "control plane: building $cmd $k8s_version ($(( $(date +%s) - start ))s so far)" >&2
  (cd "$here/kubernetes" && go build -ldflags "$ldflags" -o "$tmp/$cmd" "k8s.io/kubernetes/cmd/$cmd")
done

"$tmp/kube-apiserver" --version >&2
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "control plane: built in $(( $(date +%s) - start ))s into $out" >&2
echo "$out"
