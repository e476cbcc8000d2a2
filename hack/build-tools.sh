#!/usr/bin/env bash
# Copyright 2026 The gridview Authors.
# SPDX-License-Identifier: Apache-2.0
#
# Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy and kubectl
# v1.37.2, helm v3.22.0, kwok v0.8.0, golangci-lint v2.15.0 and logcheck v0.11.0 from the Go
# module proxy into _output/bin; with names as arguments, only those (`make lint-tools`). A
# binary that is already there with the right version stamp is reused, so only the first run
# pays for the build (about 15 minutes on two cores with a cold module cache).
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN_DIR=${GRIDVIEW_BIN_DIR:-${ROOT}/_output/bin}
KUBE_VERSION=v1.37.2
HELM_VERSION=v3.22.0
mkdir -p "${BIN_DIR}"
wanted=("$@")
known=" etcd kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubectl helm kwok golangci-lint logcheck kwok-stages.yaml "
for name in "${wanted[@]}"; do
  [[ ${known} == *" ${name} "* ]] || { echo "build-tools: unknown tool '${name}' (want some of:${known})" >&2; exit 2; }
done
is_wanted() { [[ ${#wanted[@]} -eq 0 || " ${wanted[*]} " == *" $1 "* ]]; }

kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} \
-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 \
-X k8s.io/component-base/version.gitTreeState=clean \
-X k8s.io/client-go/pkg/version.gitVersion=${KUBE_VERSION}"
# Helm's release builds stamp its version and the Kubernetes version its
# client libraries target (1.37), which `helm template` reports as
# .Capabilities.KubeVersion and `helm lint` checks deprecated APIs against.
helm_ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION} \
-X helm.sh/helm/v3/internal/version.gitTreeState=clean \
-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37 \
-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37"

# build NAME PKG MODULE-DIR LDFLAGS: the stamp names the package and the
# module's go.sum, so a version bump in either rebuilds the binary.
build() {
  local name=$1 pkg=$2 module=$3 ldflags=$4 stamp="${BIN_DIR}/.$1.version"
  is_wanted "${name}" || return 0
  local want="${pkg}@$(sha256sum "${module}/go.sum" | cut -c1-16)"
  if [[ -x "${BIN_DIR}/${name}" && -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]]; then
    echo "build-tools: ${name} is up to date"
    return
  fi
  echo "build-tools: building ${name} from ${pkg} (first build takes minutes; progress below)"
  local start=${SECONDS}
  (cd "${module}" && go build -v -trimpath -ldflags "${ldflags}" -o "${BIN_DIR}/${name}.tmp" "${pkg}") 2>&1 |
    awk '{ n++ } n % 200 == 0 { printf "build-tools: %s: %d packages compiled, last %s\n", name, n, $0; fflush() }' name="${name}"
  mv "${BIN_DIR}/${name}.tmp" "${BIN_DIR}/${name}"
  echo "${want}" > "${stamp}"
  echo "build-tools: ${name} built in $((SECONDS - start))s"
}

build etcd go.etcd.io/etcd/server/v3 "${ROOT}/hack/tools" "${kube_ldflags}"
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "${ROOT}/hack/tools" "${kube_ldflags}"
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "${ROOT}/hack/tools" "${kube_ldflags}"
build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "${ROOT}/hack/tools" "${kube_ldflags}"
build kube-proxy k8s.io/kubernetes/cmd/kube-proxy "${ROOT}/hack/tools" "${kube_ldflags}"
build kubectl k8s.io/kubernetes/cmd/kubectl "${ROOT}/hack/tools" "${kube_ldflags}"
build helm helm.sh/helm/v3/cmd/helm "${ROOT}/hack/tools/helm" "${helm_ldflags}"
build kwok sigs.k8s.io/kwok/cmd/kwok "${ROOT}/hack/tools/kwok" "-s -w"
build golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint "${ROOT}/hack/tools/lint" "-s -w"
build logcheck sigs.k8s.io/logtools/logcheck "${ROOT}/hack/tools/lint" "-s -w"
# kwok's configuration: its own stages for Nodes and Pods (hack/tools/kwok/stages),
# written again when kwok's go.sum or the program changes.
stages_want="stages@$(cat "${ROOT}/hack/tools/kwok/go.sum" "${ROOT}/hack/tools/kwok/stages/main.go" | sha256sum | cut -c1-16)"
if ! is_wanted kwok-stages.yaml; then
  :
elif [[ -f "${BIN_DIR}/kwok-stages.yaml" && "$(cat "${BIN_DIR}/.kwok-stages.version" 2>/dev/null)" == "${stages_want}" ]]; then
  echo "build-tools: kwok-stages.yaml is up to date"
else
  (cd "${ROOT}/hack/tools/kwok" && go run ./stages) > "${BIN_DIR}/kwok-stages.yaml.tmp"
  mv "${BIN_DIR}/kwok-stages.yaml.tmp" "${BIN_DIR}/kwok-stages.yaml"
  echo "${stages_want}" > "${BIN_DIR}/.kwok-stages.version"
fi
