# gridview — make targets. `make run`, `make test` (before a commit) and `make test-all`
# update-*/verify-* come in pairs.

SHELL := /usr/bin/env bash
BIN_DIR := $(CURDIR)/_output/bin
GO_PACKAGES := ./apis/... ./cmd/... ./hack/... ./pkg/... ./test/...
# test/e2e and test/e2e/ha need root and a control plane; e2e's other
# subpackages (e.g. nftrules) do not.
UNIT_PACKAGES := $(shell go list ./apis/... ./cmd/... ./hack/... ./pkg/... ./test/... 2>/dev/null | grep -v -e '/test/e2e$$' -e '/test/e2e/ha$$')
E2E_TIMEOUT ?= 30m
# How much test-fuzz runs each fuzz target: a count of executions, not a
# duration, which races go1.26's fuzz coordinator at its deadline and fails
# with "context deadline exceeded" (go.dev/issue/75804).
FUZZ_TIME ?= 20000x
# How long make soak churns (make test-all runs the soak for 20 s).
SOAK_DURATION ?= 5m

.PHONY: all build lint-chart images push verify-images prereqs tools lint-tools run test test-all test-unit test-fuzz test-e2e test-e2e-ha test-scale soak scale scale-baseline bench \
	generate update verify update-codegen verify-codegen update-gofmt verify-gofmt verify-vet verify-lint verify-structured-logging update-mod-tidy verify-mod-tidy clean

all: build

## build: compile gridview-apiserver, gridview-wrapper and the kubectl plugin
## kubectl-gridview (put _output/bin on PATH for `kubectl gridview`) into _output/bin,
## and gridview-apiserver-engine-variant, the next engine generation, which the HA
## suite rolls replicas to (pkg/viewstore/generation_variant.go).
build:
	go build -o $(BIN_DIR)/gridview-apiserver ./cmd/gridview-apiserver
	go build -tags gridview_engine_variant -o $(BIN_DIR)/gridview-apiserver-engine-variant ./cmd/gridview-apiserver
	go build -o $(BIN_DIR)/gridview-wrapper ./cmd/gridview-wrapper
	go build -o $(BIN_DIR)/kubectl-gridview ./cmd/kubectl-gridview

IMAGES_DIR := $(CURDIR)/_output/images

## images: OCI images of gridview-apiserver, gridview-wrapper and kubectl-gridview,
## one image index each for linux/amd64 and linux/arm64, built without a container
## runtime into _output/images (layouts, oci-archives for ctr, docker tarballs) and
## tagged with VERSION; prints the tag and the digests. The local cluster runs
## gridview-apiserver from the amd64 image. Outputs built from the same inputs (the sources the
## commands import, the metadata, Go's version: _output/images/inputs.sha256) are kept.
images:
	go build -o $(BIN_DIR)/images ./hack/images
	$(BIN_DIR)/images build --out $(IMAGES_DIR)

## push: push the images of `make images` to REGISTRY/NAME:VERSION, e.g.
## make push REGISTRY=ghcr.io/gridview (credentials from docker's config).
push: images
	$(BIN_DIR)/images push --out $(IMAGES_DIR) --registry "$(REGISTRY)"

## verify-images: build the images again into _output/images-again and compare
## the digests with make images': the same sources must give the same images.
## The binaries come from Go's build cache the second time: this checks the
## images' assembly (timestamps, modes, order), Go's own tests its compiler.
verify-images: images
	rm -rf $(CURDIR)/_output/images-again
	$(BIN_DIR)/images build --out $(CURDIR)/_output/images-again >/dev/null
	diff $(IMAGES_DIR)/digests.txt $(CURDIR)/_output/images-again/digests.txt
	@echo "verify-images: both builds gave the same digests"

## prereqs: check (and, as root, install from Debian) what run and test need
## beyond Go: root, iproute2, nftables, curl, protoc (for make update and verify).
## Runs before anything else.
prereqs:
	hack/prereqs.sh

## tools: build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy and
## kubectl v1.37.2, helm v3.22.0, kwok v0.8.0, golangci-lint v2.15.0 and logcheck v0.11.0,
## from the Go module proxy (once).
tools:
	hack/build-tools.sh

## lint-tools: build only what verify needs: golangci-lint v2.15.0 and logcheck v0.11.0.
lint-tools:
	hack/build-tools.sh golangci-lint logcheck

## run: start a local cluster (control plane, kwok's simulated kubelets, gridview-apiserver) with
## a demo; Ctrl-C stops it.
run: prereqs tools build images
	go build -o $(BIN_DIR)/local-up ./hack/local-up
	$(BIN_DIR)/local-up --bin-dir $(BIN_DIR)

## test: what a contributor runs before a commit, about 10 minutes warm on two cores:
## verify, the unit tests with -race and the core end-to-end suite, all with -short (each
## randomized oracle test runs one seed; the e2e tests that wait out kube-proxy's and the
## wrapper's timers through an outage, and the soak, are left to test-all).
test: prereqs verify
	$(MAKE) test-unit test-e2e SHORT=-short

## test-all: everything, as .ci/run runs it: verify, helm lint of the chart, the unit tests
## with every seed, the fuzz targets, reproducible images, the whole end-to-end suite, the HA
## suite and the scale harness at edge-1k.
test-all: prereqs verify lint-chart test-unit test-fuzz verify-images test-e2e test-e2e-ha test-scale

test-unit:
	go test -race -count=1 $(SHORT) $(UNIT_PACKAGES)

## lint-chart: helm lint --strict of artifacts/charts/gridview with its default
## values and with each values file of its ci/ (the HA, external-etcd one).
lint-chart: tools
	$(BIN_DIR)/helm lint --strict artifacts/charts/gridview
	@set -e; for values in artifacts/charts/gridview/ci/*.yaml; do \
		echo "$(BIN_DIR)/helm lint --strict artifacts/charts/gridview -f $$values"; \
		$(BIN_DIR)/helm lint --strict artifacts/charts/gridview -f $$values; \
	done

## test-fuzz: every fuzz target under pkg/ (func FuzzX in a _test.go file),
## FUZZ_TIME executions each; go test fuzzes one target per run.
test-fuzz:
	@set -e; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' pkg | xargs -n1 dirname | sort -u); do \
		for target in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go | sed 's/^func //' | sort); do \
			echo "go test -run='^$$' -fuzz='^$$target$$' -fuzztime=$(FUZZ_TIME) ./$$dir"; \
			go test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZ_TIME) ./$$dir; \
		done; \
	done

## test-e2e: the end-to-end suite against a real control plane (test/e2e; about 6 minutes,
## 4 with -short).
test-e2e: prereqs tools build images
	GRIDVIEW_BIN_DIR=$(BIN_DIR) go test -count=1 -timeout $(E2E_TIMEOUT) $(SHORT) -v ./test/e2e/

## test-e2e-ha: the HA suite: several gridview replicas, restarts, leader changes and
## engine generations (test/e2e/ha; about 6 minutes).
test-e2e-ha: prereqs tools build images
	GRIDVIEW_BIN_DIR=$(BIN_DIR) go test -count=1 -timeout $(E2E_TIMEOUT) -v ./test/e2e/ha/

## soak: the soak test (200 node informers through churn) for SOAK_DURATION.
soak: prereqs tools build images
	GRIDVIEW_BIN_DIR=$(BIN_DIR) GRIDVIEW_SOAK_DURATION=$(SOAK_DURATION) go test -count=1 -timeout 60m -v -run '^TestSoak' ./test/e2e/

## scale: the scale harness (test/scale): a local control plane, the edge-10k
## scenario written through kube-apiserver while node watchers follow, one
## table of the figures against issue 12's targets. SCALE=edge-1k|edge-10k,
## WATCHERS=N (default 2000), SEED=N; SCALE_REPLICAS, SCALE_REPEATS, SCALE_RESTARTS, SCALE_ENCODING, SCALE_RSS_LIMIT, SCALE_PROFILE_DIR,
## SCALE_GRIDVIEW_ARGS (more flags for gridview-apiserver), SCALE_KUBELETS=kwok (every Node
## heartbeats through kwok; SCALE_HEARTBEAT_WINDOW), SCALE_ENDPOINTS=workloads (with
## SCALE_KUBELETS=kwok: the endpoints are Pods of Deployments and a DaemonSet, placed by
## kube-scheduler and written into slices by the EndpointSlice controller, rather than
## EndpointSlices the harness writes) and SCALE_CURRENT_TIMEOUT from the
## environment. Fails only on harness errors.
SCALE ?= edge-10k
scale: prereqs tools build images
	SCALE=$(SCALE) WATCHERS=$(WATCHERS) SEED=$(SEED) GRIDVIEW_BIN_DIR=$(BIN_DIR) go test -count=1 -timeout 60m -v -run '^TestScale$$' ./test/scale/

## scale-baseline: the same ingest without gridview, read by as many watchers
## of every EndpointSlice straight from kube-apiserver, as vanilla kube-proxy
## reads them: what this machine's control plane takes to deliver it.
scale-baseline: prereqs tools build images
	SCALE=$(SCALE) WATCHERS=$(WATCHERS) SEED=$(SEED) GRIDVIEW_BIN_DIR=$(BIN_DIR) go test -count=1 -timeout 60m -v -run '^TestScaleBaseline$$' ./test/scale/

# test-scale: the harness at edge-1k, every node watched and heartbeating through kwok and
# every endpoint a Pod of a Deployment or a DaemonSet, failing when a view is wrong or a
# resume gets 410; its baseline, with the harness's own EndpointSlices, so that neither
# rots; then with two replicas and the harness's EndpointSlices, failing when a leader
# change costs a watcher a relist.
test-scale: prereqs tools build images
	SCALE=edge-1k WATCHERS=1000 SCALE_KUBELETS=kwok SCALE_HEARTBEAT_WINDOW=30s SCALE_ENDPOINTS=workloads GRIDVIEW_SCALE_STRICT=1 GRIDVIEW_BIN_DIR=$(BIN_DIR) go test -count=1 -timeout 40m -v -run '^TestScale$$' ./test/scale/
	SCALE=edge-1k WATCHERS=1000 SCALE_KUBELETS=kwok GRIDVIEW_SCALE_STRICT=1 GRIDVIEW_BIN_DIR=$(BIN_DIR) go test -count=1 -timeout 30m -v -run '^TestScaleBaseline$$' ./test/scale/
	SCALE=edge-1k WATCHERS=1000 SCALE_REPLICAS=2 SCALE_REPEATS=2 GRIDVIEW_SCALE_STRICT=1 GRIDVIEW_BIN_DIR=$(BIN_DIR) go test -count=1 -timeout 30m -v -run '^TestScale$$' ./test/scale/

## bench: the benchmarks of every package; pkg/topology's BenchmarkEdge10kReport
## prints the edge-10k table against the targets of docs/performance.md.
bench:
	go test -run='^$$' -bench=. -benchmem ./pkg/...

generate: update-codegen
update: update-codegen update-gofmt update-mod-tidy
## verify: generated code, gofmt, go vet, golangci-lint (.golangci.yml), structured
## logging (logcheck: klog's InfoS/ErrorS) and tidy go.mod files.
verify: verify-codegen verify-gofmt verify-vet verify-lint verify-structured-logging verify-mod-tidy

update-codegen:
	hack/update-codegen.sh

verify-codegen:
	hack/verify-codegen.sh

update-gofmt:
	gofmt -w apis cmd hack pkg test

verify-gofmt:
	@out=$$(gofmt -l apis cmd hack pkg test); if [[ -n "$$out" ]]; then echo "gofmt needed (run make update-gofmt):"; echo "$$out"; exit 1; fi

verify-vet:
	go vet $(GO_PACKAGES)

verify-lint: lint-tools
	$(BIN_DIR)/golangci-lint run $(GO_PACKAGES)

verify-structured-logging: lint-tools
	$(BIN_DIR)/logcheck -check-structured -check-deprecations $(GO_PACKAGES)

# The repository's module and each tools module (hack/tools/...).
GO_MODULES := . $(patsubst %/go.mod,%,$(wildcard hack/tools/go.mod hack/tools/*/go.mod))

update-mod-tidy:
	@set -e; for m in $(GO_MODULES); do echo "go mod tidy in $$m"; (cd $$m && go mod tidy); done

verify-mod-tidy:
	@set -e; for m in $(GO_MODULES); do (cd $$m && go mod tidy -diff) || { echo "go.mod or go.sum in $$m is not tidy (run make update-mod-tidy)"; exit 1; }; done

clean:
	rm -rf _output/local
