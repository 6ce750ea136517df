# deploy-web: the two commands that matter are `make demo` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO      ?= go
BIN     := $(CURDIR)/bin
comma   := ,

# Build tags of every build, test, vet and staticcheck run of deploy-web:
# kustomize_disable_go_plugin_support leaves kustomize's Go plugin loader,
# and with it Go's plugin package, out of the binary (docs/security.md, "Manifest repositories").
# Keep in step with internal/buildtags.Tags and the Dockerfile
# (TestBuildsLeaveOutGoPlugin checks all three).
GO_TAGS := kustomize_disable_go_plugin_support

# Versions of the local control plane and IdP (keep in step with tools/*/go.mod;
# devcluster's TestVersionsMatchTools checks it). Each lives in its own folder
# so a version bump builds anew and an unchanged one costs nothing.
K8S_VERSION   := v1.37.2
ETCD_VERSION  := v3.6.16
KWOK_VERSION  := v0.8.0
HYDRA_VERSION := v2.3.0

K8S_DIR   := $(BIN)/k8s-$(K8S_VERSION)
K8S_BINS  := $(K8S_DIR)/kube-apiserver $(K8S_DIR)/kube-controller-manager $(K8S_DIR)/kube-scheduler $(K8S_DIR)/kubectl
ETCD_BIN  := $(BIN)/etcd-$(ETCD_VERSION)/etcd
KWOK_BIN  := $(BIN)/kwok-$(KWOK_VERSION)/kwok
HYDRA_BIN := $(BIN)/hydra-$(HYDRA_VERSION)/hydra

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

.PHONY: demo
demo: cluster-bin build ## run everything locally: control plane, operator, seeded fleet, OIDC login, dashboard
	$(BIN)/deploy-web demo --bin-dir $(BIN)

.PHONY: test
test: cluster-bin check-generated ## unit + integration (real control plane) + browser tests, with -race
	$(GO) test -tags $(GO_TAGS) -race -count=1 -timeout 20m ./...

.PHONY: unit
unit: ## unit tests only (no control plane, no browser)
	$(GO) test -tags $(GO_TAGS) -race -count=1 -short ./...

.PHONY: e2e
e2e: cluster-bin ## browser tests only (headless Chromium against the demo)
	$(GO) test -tags $(GO_TAGS) -race -count=1 -v ./e2e/

.PHONY: bench
bench: ## benchmarks of the list, page, caches, tree, diff and logs (see BENCHMARKS.md)
	$(GO) test -tags $(GO_TAGS) -run '^$$' -bench . -benchmem -count 1 ./kubeview/ ./handlers/ ./web/templates/ ./diffrender/
	$(GO) test -tags $(GO_TAGS) -run '^$$' -bench . -benchtime 10x ./e2e/perf/

.PHONY: bench-plan
bench-plan: cluster-bin ## plan, no-op apply and rollback through git (commit + plan + apply) of a 47-object project on the local control plane (see BENCHMARKS.md)
	$(GO) test -tags $(GO_TAGS) -run '^$$' -bench 'BenchmarkPlan47|BenchmarkRollbackGit47' -benchtime 3x ./deployplan/

.PHONY: bench-cluster
# The fleet sizes of bench-cluster (BENCH_APPS=2000 for one). Not $(or ...):
# make splits its arguments at commas, which left only 2000.
BENCH_APPS ?= 2000,10000
bench-cluster: cluster-bin build ## real-cluster scale benchmark: 2,000 then 10,000 Apps, dashboard as its own process; writes BENCHMARKS.md
	$(GO) run -tags $(GO_TAGS) ./cmd/benchcluster --bin-dir $(BIN) --deploy-web $(BIN)/deploy-web --apps $(BENCH_APPS) --out BENCHMARKS.md

.PHONY: bench-restart
bench-restart: cluster-bin build ## rolling restart of 3 replicas under traffic, auto-sync and applies on the local control plane: requests failed, records missing, notifications duplicated; writes BENCHMARKS.md
	$(GO) run -tags $(GO_TAGS) ./cmd/benchrestart --rounds 2 --bin-dir $(BIN) --deploy-web $(BIN)/deploy-web --out BENCHMARKS.md

.PHONY: build
build: generate ## build bin/deploy-web
	$(GO) build -tags $(GO_TAGS) -o $(BIN)/deploy-web ./cmd/deploy-web

.PHONY: image-binary
image-binary: generate ## the static binary the container image ships
	CGO_ENABLED=0 $(GO) build -tags $(GO_TAGS) -trimpath -buildvcs=false -ldflags='-s -w' -o $(BIN)/deploy-web-static ./cmd/deploy-web

.PHONY: generate
generate: ## regenerate templ code
	$(GO) tool templ generate

.PHONY: check-generated
check-generated: generate ## fail when committed generated code is stale
	@git diff --exit-code -- '*_templ.go' || { echo "templ output is stale: run make generate and commit"; exit 1; }

.PHONY: fmt
fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')
	$(GO) tool templ fmt web/templates

.PHONY: lint
lint: ## go vet, gofmt check, staticcheck, no built binary tracked
	$(GO) vet -tags $(GO_TAGS) ./...
	@big=$$(git ls-files -z | xargs -0 -r stat -c '%s %n' 2>/dev/null | awk '$$1 > 1048576 {print $$2}'); if [ -n "$$big" ]; then echo "tracked files over 1 MB (a built binary? ignore it):"; echo "$$big"; exit 1; fi
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) tool staticcheck -tags $(GO_TAGS) ./...

.PHONY: cluster-bin
cluster-bin: $(K8S_BINS) $(ETCD_BIN) $(KWOK_BIN) $(HYDRA_BIN) ## build the local control plane and IdP from Go modules into bin/ (once)

# build-step NAME USUAL COMMAND: says which piece is building and roughly how
# long it takes on 2 cores the first time, runs it and says how long it took.
# The per-piece ranges are estimates (warm-cache build times of
# CONTROL-PLANE.md plus module downloads); what was measured is the whole
# first build: 24.5 min for a first `make demo`, 41.5 min for cluster-bin on
# a machine loaded by other builds.
define build-step
	@echo "cluster-bin: building $(1) (usually $(2) on 2 cores the first time; downloads Go modules) ..."
	@start=$$SECONDS; $(3) && echo "cluster-bin: $(1) done in $$(( (SECONDS-start)/60 ))m$$(( (SECONDS-start)%60 ))s"
endef

# The version the control plane reports (/version, discovery): a module
# build leaves it v0.0.0, which no real cluster answers (a Helm chart's
# kubeVersion constraint is checked against it).
K8S_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) -X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(K8S_VERSION:v%=%))) -X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(K8S_VERSION:v%=%))) -X k8s.io/component-base/version.gitTreeState=clean

$(K8S_BINS) &:
	$(call build-step,kube-apiserver + controller-manager + scheduler + kubectl (piece 1 of 4),10-20 min,cd tools/kube && $(GO) build -ldflags '$(K8S_LDFLAGS)' -o $(K8S_DIR)/ k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)

$(ETCD_BIN):
	$(call build-step,etcd (piece 2 of 4),1-3 min,cd tools/etcd && $(GO) build -o $@ go.etcd.io/etcd/server/v3)

$(KWOK_BIN):
	$(call build-step,kwok (piece 3 of 4),1-4 min,cd tools/kwok && $(GO) build -o $@ sigs.k8s.io/kwok/cmd/kwok)

$(HYDRA_BIN):
	$(call build-step,Ory Hydra (piece 4 of 4; cgo + sqlite),5-15 min,cd tools/hydra && CGO_ENABLED=1 $(GO) build -tags sqlite$(comma)sqlite_omit_load_extension -o $@ github.com/ory/hydra/v2)

.PHONY: clean
clean: ## remove built binaries and test artifacts
	rm -rf $(BIN) artifacts reports
