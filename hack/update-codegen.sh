#!/usr/bin/env bash
# Copyright 2026 The gridview Authors.
# SPDX-License-Identifier: Apache-2.0
#
# Regenerates protobuf, deepcopy, defaults, conversion, OpenAPI, clientset,
# listers, informers and apply configurations from the types under apis/.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

MODULE=github.com/gridview/gridview
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"
# go list -m prints an empty directory for a module that was never
# downloaded, as on a fresh machine: download it first.
(cd "${ROOT}" && go mod download k8s.io/code-generator)
CODEGEN_PKG=$(cd "${ROOT}" && go list -m -f '{{.Dir}}' k8s.io/code-generator)
if [[ -z "${CODEGEN_PKG}" || ! -f "${CODEGEN_PKG}/kube_codegen.sh" ]]; then
  echo "update-codegen: k8s.io/code-generator has no kube_codegen.sh in '${CODEGEN_PKG}'" >&2
  exit 1
fi

cd "${ROOT}"

# First, as Kubernetes does: it writes the protobuf struct tags of the types.
"${ROOT}/hack/update-protobuf.sh"

# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

kube::codegen::gen_helpers --boilerplate "${BOILERPLATE}" "${ROOT}/apis"

# The types embed core/v1 and discovery/v1 types, whose definitions must be
# served too: server-side apply and kubectl explain resolve every reference.
kube::codegen::gen_openapi \
  --extra-pkgs k8s.io/api/core/v1 \
  --extra-pkgs k8s.io/api/discovery/v1 \
  --extra-pkgs k8s.io/apimachinery/pkg/util/intstr \
  --output-dir "${ROOT}/generated/openapi" \
  --output-pkg "${MODULE}/generated/openapi" \
  --output-model-name-file zz_generated.model_name.go \
  --report-filename "${ROOT}/hack/api-rule-violations.list" \
  --update-report \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/apis"

# Kubernetes types inside ours use client-go's apply configurations, so that a
# server-side apply of a ServiceGrid sends only the template fields a client set.
externals=(
  k8s.io/api/core/v1.ServiceSpec:k8s.io/client-go/applyconfigurations/core/v1
  k8s.io/api/core/v1.LoadBalancerStatus:k8s.io/client-go/applyconfigurations/core/v1
  k8s.io/api/discovery/v1.Endpoint:k8s.io/client-go/applyconfigurations/discovery/v1
  k8s.io/api/discovery/v1.EndpointPort:k8s.io/client-go/applyconfigurations/discovery/v1
)

schema=$(mktemp)
trap 'rm -f "${schema}"' EXIT
go run ./hack/models-schema > "${schema}"

kube::codegen::gen_client \
  --with-watch \
  --with-applyconfig \
  --applyconfig-openapi-schema "${schema}" \
  --applyconfig-externals "$(IFS=,; echo "${externals[*]}")" \
  --plural-exceptions "NodeEndpoints:NodeEndpoints,ServiceRoutes:ServiceRoutes" \
  --output-dir "${ROOT}/generated" \
  --output-pkg "${MODULE}/generated" \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/apis"
