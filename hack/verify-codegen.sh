#!/usr/bin/env bash
# Copyright 2026 The gridview Authors.
# SPDX-License-Identifier: Apache-2.0
#
# Fails when the generated code differs from what hack/update-codegen.sh makes
# of the current types. It regenerates in a scratch copy, so the tree is untouched.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRATCH=$(mktemp -d)
trap 'rm -rf "${SCRATCH}"' EXIT

tar -C "${ROOT}" --exclude=./_output --exclude=./.git -cf - . | tar -C "${SCRATCH}" -xf -
"${SCRATCH}/hack/update-codegen.sh" >/dev/null

stale=0
for dir in apis generated hack/api-rule-violations.list; do
  if ! diff -Naupr "${ROOT}/${dir}" "${SCRATCH}/${dir}"; then
    stale=1
  fi
done
if [[ ${stale} -ne 0 ]]; then
  echo "generated code is out of date: run make update-codegen (or make generate)" >&2
  exit 1
fi
echo "generated code is up to date"
