# Benchmark workspace: see README.md. `make help` lists the targets.

DURATION    ?= 3s
WARMUP      ?= 1s
WINDOW      ?= 1s
ROUNDS      ?= 6
CONNECTIONS ?= 64
FRAMEWORKS  ?= actix,axum,rocket
SCENARIOS   ?= payload,state
LAYERS      ?= 10
SERVER_CPUS ?= 0
CLIENT_CPUS ?= 1
OUT         ?= results
PROFILE     ?= release

CARGO   ?= cargo
SERVERS  = -p server-actix -p server-axum -p server-rocket
CLIENT   = target/release/bench-client
SUITE    = --duration $(DURATION) --warmup $(WARMUP) --window $(WINDOW) --rounds $(ROUNDS) \
           --connections $(CONNECTIONS) --frameworks $(FRAMEWORKS) --scenarios $(SCENARIOS) \
           --layers $(LAYERS) --server-cpus $(SERVER_CPUS) --client-cpus $(CLIENT_CPUS) --out $(OUT)

.PHONY: help bench bench-debug bench-all bench-micro test build-client fmt clippy doc

help: ## List the targets and the variables they read
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'
	@echo "  variables: DURATION=$(DURATION) WARMUP=$(WARMUP) WINDOW=$(WINDOW) ROUNDS=$(ROUNDS) CONNECTIONS=$(CONNECTIONS)"
	@echo "             FRAMEWORKS=$(FRAMEWORKS) SCENARIOS=$(SCENARIOS) LAYERS=$(LAYERS)"
	@echo "             SERVER_CPUS=$(SERVER_CPUS) CLIENT_CPUS=$(CLIENT_CPUS) OUT=$(OUT) PROFILE=$(PROFILE)"

build-client:
	$(CARGO) build --locked --release -p bench-client

bench: build-client ## Build the servers in PROFILE (release) and run the suite
	$(CARGO) build --locked --profile $(PROFILE) $(SERVERS)
	$(CLIENT) suite --profile $(PROFILE) --no-build $(SUITE)

bench-debug: build-client ## The same in the "profiling" profile (release + debug = true)
	$(CARGO) build --locked --profile profiling $(SERVERS)
	$(CLIENT) suite --profile profiling --no-build $(SUITE)

bench-all: bench bench-debug ## Both profiles; the second report shows them side by side

bench-micro: ## Criterion micro-benchmarks: state clones, payload serialization
	$(CARGO) bench --locked -p common --bench state_and_payload

test: fmt clippy ## fmt check, clippy -D warnings, every test, docs
	$(CARGO) test --workspace --locked
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --locked

fmt:
	$(CARGO) fmt --all --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
