#!/usr/bin/env bash
# Copyright 2026 The gridview Authors.
# SPDX-License-Identifier: Apache-2.0
#
# Generates generated.proto and generated.pb.go for every package under apis/
# whose doc.go says `+k8s:protobuf-gen=package`, and the `protobuf:"..."` tags
# of their types, with k8s.io/code-generator's go-to-protobuf as k8s.io/api is
# generated. hack/update-codegen.sh runs it first, as Kubernetes does, since
# the struct tags it writes are part of the types the other generators read.
#
# It needs protoc (Debian's protobuf-compiler: hack/prereqs.sh installs it as
# root). Everything else comes from the Go module proxy at the versions go.mod
# pins: go-to-protobuf and protoc-gen-gogo from k8s.io/code-generator,
# goimports from golang.org/x/tools, and the .proto files ours import from
# k8s.io/api, k8s.io/apimachinery and github.com/gogo/protobuf (gogo.proto and
# descriptor.proto, read only to parse the first pass's gogoproto options).
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MODULE=github.com/gridview/gridview
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"

if ! command -v protoc >/dev/null; then
  echo "update-protobuf: protoc is missing: run hack/prereqs.sh as root, or apt-get install protobuf-compiler" >&2
  exit 1
fi

cd "${ROOT}"

# Our packages, as k8s.io/api finds its own: by the package tag in doc.go.
mapfile -t apis < <(grep -rl --include=doc.go -e '^// +k8s:protobuf-gen=package$' apis |
  xargs -r -n1 dirname | sort -u | sed "s|^|${MODULE}/|")
if [[ ${#apis[@]} -eq 0 ]]; then
  echo "update-protobuf: no package under apis/ has +k8s:protobuf-gen=package" >&2
  exit 1
fi

# The Kubernetes packages our types refer to. The "-" prefix loads them for
# their message names and .proto files but generates nothing for them: their
# generated code ships in k8s.io/api and k8s.io/apimachinery.
apimachinery_deps=(
  -k8s.io/apimachinery/pkg/util/intstr
  -k8s.io/apimachinery/pkg/api/resource
  -k8s.io/apimachinery/pkg/runtime/schema
  -k8s.io/apimachinery/pkg/runtime
  -k8s.io/apimachinery/pkg/apis/meta/v1
)
api_deps=(
  -k8s.io/api/core/v1
  -k8s.io/api/discovery/v1
)

# As Kubernetes does, start from no generated protobuf code, so that a
# package whose tag was removed loses its files too.
find apis \( -name generated.proto -o -name generated.pb.go \) -exec rm -f {} +

work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT

module_version() { go list -m -f '{{.Version}}' "$1"; }
# The directory of a module in the module cache, downloaded first: go list -m
# prints an empty directory for a module a fresh machine never fetched.
module_dir() { go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'; }

codegen_version=$(module_version k8s.io/code-generator)
GOBIN="${work}/bin" go install \
  "k8s.io/code-generator/cmd/go-to-protobuf@${codegen_version}" \
  "k8s.io/code-generator/cmd/go-to-protobuf/protoc-gen-gogo@${codegen_version}"
GOBIN="${work}/bin" go install "golang.org/x/tools/cmd/goimports@$(module_version golang.org/x/tools)"

# gogo/protobuf is code-generator's dependency, not ours: ask its go.mod.
codegen_dir=$(module_dir "k8s.io/code-generator@${codegen_version}")
gogo_version=$(cd "${codegen_dir}" && go list -m -f '{{.Version}}' github.com/gogo/protobuf)
gogo_dir=$(module_dir "github.com/gogo/protobuf@${gogo_version}")

# go-to-protobuf and protoc name each .proto by its Go import path, so they
# need one tree laid out by import path (a GOPATH): links to this repository
# and to the module cache's copies. It lies outside the repository, since
# protoc's "-I ." would otherwise name our file by its path inside it.
src="${work}/src"
mkdir -p "${src}/github.com/gridview" "${src}/github.com/gogo" "${src}/k8s.io"
ln -s "${ROOT}" "${src}/${MODULE}"
ln -s "${gogo_dir}" "${src}/github.com/gogo/protobuf"
for module in k8s.io/api k8s.io/apimachinery; do
  ln -s "$(module_dir "${module}@$(module_version "${module}")")" "${src}/${module}"
done

PATH="${work}/bin:${PATH}" go-to-protobuf \
  --go-header-file "${BOILERPLATE}" \
  --output-dir "${src}" \
  --proto-import "${gogo_dir}/protobuf" \
  --apimachinery-packages "$(IFS=,; echo "${apimachinery_deps[*]}")" \
  --packages "$(IFS=,; echo "${api_deps[*]},${apis[*]}")"
