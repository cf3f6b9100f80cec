# kwhouse — run `make help` for the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO        ?= go
BIN       := bin/kwhouse
RUN_DIR   := .run
CH_PORT   ?= 9000
REDIS_PORT ?= 6379
TEST_ENV  := KWHOUSE_TEST_CLICKHOUSE_ADDR=127.0.0.1:$(CH_PORT) KWHOUSE_TEST_REDIS_ADDR=127.0.0.1:$(REDIS_PORT)

.PHONY: help
help: ## Show the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: services
services: ## Install (if missing) and start ClickHouse and Redis on loopback
	@KWHOUSE_CH_PORT=$(CH_PORT) KWHOUSE_REDIS_PORT=$(REDIS_PORT) scripts/services.sh up

.PHONY: services-down
services-down: ## Stop the ClickHouse and Redis that `make services` started
	@scripts/services.sh down

CHDB_VERSION ?= 26.7.3-stable.1
# The chDB library's folder (fetched once into .cache/chdb/VERSION) and the cgo settings of
# a build that links it; the binary finds it through its rpath.
CHDB_DIR = $$(scripts/chdb.sh $(CHDB_VERSION))
CHDB_ENV = CGO_ENABLED=1 CGO_LDFLAGS="-L$$dir -Wl,-rpath,$$dir" LD_LIBRARY_PATH="$$dir"

.PHONY: build
build: ## Build bin/kwhouse (server mode only: pure Go, no chDB)
	$(GO) build -o $(BIN) ./cmd/kwhouse

.PHONY: build-embedded
build-embedded: ## Build bin/kwhouse with chDB inside: server and embedded mode (fetches chDB once, needs cgo)
	@scripts/services.sh toolchain
	@dir=$(CHDB_DIR) && $(CHDB_ENV) $(GO) build -tags chdb -o $(BIN) ./cmd/kwhouse

.PHONY: run
run: build-embedded ## Serve the API on :8080 in embedded mode, data in .run/embedded: no servers (Ctrl-C stops it)
	@scripts/run.sh

.PHONY: run-servers
run-servers: services build ## Serve the API on :8080 on ClickHouse and Redis servers (installed and started on loopback)
	@KWHOUSE_RUN_MODE=servers scripts/run.sh

.PHONY: browser
browser: ## Install Debian's chromium (if missing) for the dashboard's browser test
	@scripts/services.sh browser

.PHONY: test
test: services browser ## Set everything up and run every test (race detector on), then the API suite in embedded mode
	$(TEST_ENV) $(GO) test -race -count=1 -timeout 20m ./...
	@$(MAKE) --no-print-directory test-embedded

.PHONY: test-embedded
test-embedded: browser ## The API suite, the dashboard in Chromium and the CLI's embedded tests on chDB and an in-process Redis (no servers)
	@scripts/services.sh toolchain
	@dir=$(CHDB_DIR) && data=$$(mktemp -d "$${TMPDIR:-/tmp}/kwhouse-test-embedded.XXXXXX") && \
	trap 'rm -rf "$$data"' EXIT && \
	$(CHDB_ENV) KWHOUSE_TEST_EMBEDDED=1 KWHOUSE_TEST_EMBEDDED_DIR="$$data" \
	$(GO) test -tags chdb -count=1 -timeout 30m ./httpapi/ ./dashboard/ && \
	$(CHDB_ENV) $(GO) test -tags chdb -count=1 -timeout 5m -run Embedded ./cmd/kwhouse/

.PHONY: test-modern
test-modern: services ## Run every statement on current ClickHouse (chDB 26.x) and compare with 18.16
	@dir=$(CHDB_DIR) && $(CHDB_ENV) $(TEST_ENV) \
	$(GO) test -tags chdb -count=1 -timeout 20m ./conformance/ ./chstore/...

CLUSTER_ADDRS := 127.0.0.1:9101,127.0.0.1:9102,127.0.0.1:9103,127.0.0.1:9104
CLUSTER_ENV := KWHOUSE_TEST_CLICKHOUSE_ADDR=$(CLUSTER_ADDRS) KWHOUSE_TEST_CLICKHOUSE_CLUSTER=kw \
	KWHOUSE_TEST_REDIS_ADDR=127.0.0.1:$(REDIS_PORT) KWHOUSE_TEST_SINGLE_CLICKHOUSE_ADDR=127.0.0.1:$(CH_PORT)

.PHONY: cluster-up
cluster-up: ## Start a local ClickHouse cluster: ZooKeeper + 2 shards x 2 replicas (cluster kw, ports 9101-9104)
	@scripts/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster
	@scripts/cluster.sh down

# The API suite takes about 21 minutes on the cluster on 2 cores (load 4), over 30 at load 10.
.PHONY: test-cluster
test-cluster: services ## Start the local cluster, run the API suite and the cluster drills on it, stop it
	@scripts/cluster.sh up
	@trap 'scripts/cluster.sh down' EXIT; \
	$(CLUSTER_ENV) $(GO) test -count=1 -timeout 60m ./httpapi/ ./query/ ./schema/ ./docstore/ ./ingest/ ./tariffs/ && \
	$(CLUSTER_ENV) $(GO) test -count=1 -timeout 10m -v -run 'Cluster|Shards|KilledNode' ./conformance/

.PHONY: test-short
test-short: ## go test -short (no test skips in short mode: store tests still need KWHOUSE_TEST_* or Docker)
	$(GO) test -short -count=1 ./...

.PHONY: lint
lint: ## gofmt and go vet
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt would change the files above"; exit 1; }
	$(GO) vet ./...

.PHONY: clean
clean: ## Remove build output (keeps .run data)
	rm -rf bin

.PHONY: bench-ingest
bench-ingest: services build ## Ingest benchmark: API vs ClickHouse JSONEachRow vs Native (docs/benchmarks.md)
	$(GO) run ./bench/ingest

.PHONY: bench
bench: bench-ingest bench-costs bench-slots bench-schedules bench-load bench-onboard bench-webhooks bench-modes ## Every benchmark

.PHONY: bench-costs
bench-costs: services ## Cost query benchmark: 17.5 M readings, p50/p99 and the bare-sum floor
	$(GO) run ./bench/costs

.PHONY: bench-onboard
bench-onboard: services ## Onboarding: location + tariff pairs/s with 1, 8, 32 clients; kwhouse import of 100,000; tariff_rates storage
	$(GO) run ./bench/onboard

.PHONY: bench-load
bench-load: services ## Fairness: ingest alone, beside 16 cost clients of another account (2 min), then normal tenants alone and beside a hostile one (2 × 90 s)
	$(GO) run ./bench/load

.PHONY: bench-schedules
bench-schedules: services ## POST /schedules: p50/p99 of 24 h × 10 devices and 7 days × 50 devices
	$(GO) run ./bench/schedules

.PHONY: bench-webhooks
bench-webhooks: services build ## Webhooks: 10,000 events/min to 3 loopback endpoints (4 min), then beside a dead one (2 min); p99 event-to-delivery, kwhouse memory (its own process)
	$(GO) run ./bench/webhooks

.PHONY: bench-modes
bench-modes: services ## Embedded vs server mode: demo fleet load, a location's and the fleet's month by DAY; a 1,000-location fleet's month
	@scripts/services.sh toolchain
	@dir=$(CHDB_DIR) && $(CHDB_ENV) $(GO) run -tags chdb ./bench/modes

.PHONY: bench-slots
bench-slots: services ## Slot query benchmark: p50/p99 and requests/s with 8 clients
	$(GO) run ./bench/slots
