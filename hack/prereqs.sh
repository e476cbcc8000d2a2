#!/usr/bin/env bash
# Copyright 2026 The gridview Authors.
# SPDX-License-Identifier: Apache-2.0
#
# Checks, before anything else runs, what `make run` and `make test` need from
# the machine beyond Go, and installs what is missing from Debian's packages
# when it runs as root. .ci/run and the Makefile both call it, so a fresh
# machine fails here with the fix named, not halfway through the suite.
#
#   hack/prereqs.sh            check, and install what is missing (root)
#   hack/prereqs.sh --check    check only; exit 1 naming what is missing
set -o errexit -o nounset -o pipefail

# command:Debian package. ip makes the network namespaces of the local
# control plane; nft reads what the real kube-proxy programmed; curl reads
# the wrapper's metrics inside a node's namespace; protoc compiles the
# generated.proto of hack/update-protobuf.sh, which make verify reruns.
required=(ip:iproute2 nft:nftables curl:curl protoc:protobuf-compiler)

check_only=false
case "${1:-}" in
  "") ;;
  --check) check_only=true ;;
  *) echo "prereqs: unknown argument '$1' (want nothing or --check)" >&2; exit 2 ;;
esac

missing_packages() {
  local entry
  for entry in "${required[@]}"; do
    command -v "${entry%%:*}" >/dev/null || echo "${entry#*:}"
  done
}

problems=()
if [[ ${EUID} -ne 0 ]]; then
  problems+=("root: the local control plane and kube-proxy need network namespaces and nftables; run as root")
fi

mapfile -t packages < <(missing_packages)
if [[ ${#packages[@]} -gt 0 && ${check_only} == false && ${EUID} -eq 0 ]] && command -v apt-get >/dev/null; then
  echo "prereqs: installing ${packages[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"
  mapfile -t packages < <(missing_packages)
fi
if [[ ${#packages[@]} -gt 0 ]]; then
  problems+=("missing commands: install them with: apt-get install ${packages[*]}")
fi

if [[ ${#problems[@]} -gt 0 ]]; then
  echo "prereqs: this machine cannot run the local control plane yet:" >&2
  printf '  - %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "prereqs: root, ip, nft, curl and protoc are present"
