# Benchmark workspace: see README.md. `make help` lists the targets.

DURATION    ?= 3s
WARMUP      ?= 1s
WINDOW      ?= 1s
ROUNDS      ?= 6
CONNECTIONS ?= 64
FRAMEWORKS  ?= actix,axum,rocket
# `fortunes` (/fortunes → /fortunes/cached, the request that does real work) is
# not in the default: it adds ~2 min (a quarter) to `make bench`. Ask for it with
# SCENARIOS=payload,state,fortunes; the report's "In proportion" table then
# reads every delta as a share of a /fortunes request. SCENARIOS=memory (alone or
# beside others) adds what a connection costs in memory, as `make memory` measures it.
# SCENARIOS=middleware: what each layer a framework offers (--middleware) adds per request;
# SCENARIOS=extractors: what each typed extractor adds over reading the request raw.
SCENARIOS   ?= payload,state,frameworks
LAYERS      ?= 10
SERVER_CPUS ?= 0
CLIENT_CPUS ?= 1
OUT         ?= results
PROFILE     ?= release
# PAIRING=auto pairs variants in slices (a profiler's samples go to their slice's variant)
# (rounds: one run per variant).
PAIRING     ?= auto
# CALL_GRAPH=fp: `make bench-debug` and `make flamegraph` walk stacks with frame
# pointers instead of DWARF (lighter; stacks cut in glibc, see docs/PROFILING.md).
CALL_GRAPH  ?= dwarf
# PERF_FREQUENCY_HZ: perf's samples per second of server CPU (docs/PROFILING.md: what each costs).
PERF_FREQUENCY_HZ ?= 249
# NO_BUILD=1: `make bench` and `make bench-debug` build neither the client nor
# the servers (`suite --no-build`) and run the binaries already built, e.g.
# `make bench NO_BUILD=1 PROFILE=dev CLIENT=target/debug/bench-client`.
NO_BUILD    ?=
# LOAD_PERCENT=50: `make bench` and `make ab` measure latency at a fixed load: each
# round measures the baseline's closed-loop rate, then alternates the variants in the
# open loop at that share of it; every delta gets p50/p90/p99/p99.9 with intervals.
LOAD_PERCENT ?=
# COUNT=1: `make ab` counts the two sides instead of timing them (`ab --count`); `make bench` then counts every delta's two routes in each framework (as `make count`
# does) and shows each delta's counted change beside its timed one (about 15 s per route counted).
COUNT ?=
# PUT_BODY_BYTES=65536: `make memory` sends each idle connection a PUT /api/devices of that many
# bytes before its verified request (what a large request leaves in a connection's buffers).
PUT_BODY_BYTES ?=
# MIDDLEWARE=1: `make count` counts each layer a framework offers (--middleware) against its bare server.
MIDDLEWARE ?=
# FILLER_ROUTES=10,100,1000: `make count` counts /scale/target and /scale/target/42 behind that many
# routes of each kind (--filler-routes) against the framework's own server.
FILLER_ROUTES ?=
# NO_HEAP=1: `make memory` leaves out the live heap count (a third process per repeat, under memcheck).
NO_HEAP ?=
# TCP_NODELAY=1: the servers set TCP_NODELAY on their connections (`suite --tcp-nodelay`); each
# framework's own default otherwise (docs/SERVERS.md).
TCP_NODELAY ?=

CARGO   ?= cargo
CLIENT   = target/release/bench-client
BUILD_CLIENT = $(if $(NO_BUILD),,build-client)
SUITE    = --duration $(DURATION) --warmup $(WARMUP) --window $(WINDOW) --rounds $(ROUNDS) \
           --connections $(CONNECTIONS) --frameworks $(FRAMEWORKS) --scenarios $(SCENARIOS) \
           --layers $(LAYERS) --server-cpus $(SERVER_CPUS) --client-cpus $(CLIENT_CPUS) --out $(OUT) \
           --pairing $(PAIRING) $(if $(NO_BUILD),--no-build) $(if $(LOAD_PERCENT),--load-percent $(LOAD_PERCENT)) \
           $(if $(COUNT),--count $(if $(NO_PERF),--no-perf)) $(if $(TCP_NODELAY),--tcp-nodelay)

.PHONY: help ab count versions memory mutants bench bench-debug bench-all bench-micro calibrate flamegraph perf test build-client fmt clippy doc \
        two-hosts metrics-overhead images push

help: ## List the targets and the variables they read
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'
	@echo "  variables: DURATION=$(DURATION) WARMUP=$(WARMUP) WINDOW=$(WINDOW) ROUNDS=$(ROUNDS) CONNECTIONS=$(CONNECTIONS)"
	@echo "             FRAMEWORKS=$(FRAMEWORKS) SCENARIOS=$(SCENARIOS) LAYERS=$(LAYERS)"
	@echo "             SERVER_CPUS=$(SERVER_CPUS) CLIENT_CPUS=$(CLIENT_CPUS) OUT=$(OUT) PROFILE=$(PROFILE)"
	@echo "             PAIRING=$(PAIRING) CALL_GRAPH=$(CALL_GRAPH) PERF_FREQUENCY_HZ=$(PERF_FREQUENCY_HZ) (bench-debug, flamegraph)"
	@echo "             NO_BUILD=$(NO_BUILD) (1: run the binaries already built) CLIENT=$(CLIENT)"

build-client: prereqs-bench
	$(CARGO) build --locked --release -p bench-client

# What a fresh machine lacks, named in one line with the command that installs it (exit 2).
prereqs-%:
	@NO_PERF=$(NO_PERF) bash bench/prereqs.sh $*

# The suite builds the servers itself (cargo build --locked --profile …), so
# the profiling build gets its frame pointers in one place.
bench: $(BUILD_CLIENT) ## Build the servers in PROFILE (release) and run the suite
	$(CLIENT) suite --profile $(PROFILE) $(SUITE)

bench-debug: $(BUILD_CLIENT) perf ## The same in the "profiling" profile (release + debug = true), perf attached
	$(CLIENT) suite --profile profiling --call-graph $(CALL_GRAPH) --perf-frequency-hz $(PERF_FREQUENCY_HZ) $(SUITE)

calibrate: build-client ## The client's own ceiling against its built-in canned responder
	$(CLIENT) calibrate --duration $(DURATION) --warmup $(WARMUP) --connections $(CONNECTIONS) \
	  --server-cpus $(SERVER_CPUS) --client-cpus $(CLIENT_CPUS)

FRAMEWORK ?= axum
ROUTE     ?= /api/devices
flamegraph: build-client perf ## Flame graph of one server on one route: FRAMEWORK=axum ROUTE=/api/devices
	$(CLIENT) flamegraph --framework $(FRAMEWORK) --route $(ROUTE) --duration $(DURATION) \
	  --connections $(CONNECTIONS) --layers $(LAYERS) --server-cpus $(SERVER_CPUS) --client-cpus $(CLIENT_CPUS) --out $(OUT) \
	  --call-graph $(CALL_GRAPH) --perf-frequency-hz $(PERF_FREQUENCY_HZ)

# perf comes from Debian's linux-perf; without it the suite runs on and says so.
perf:
	@command -v perf >/dev/null 2>&1 || (apt-get install -y -qq linux-perf >/dev/null 2>&1 || \
	  (apt-get update -qq && apt-get install -y -qq linux-perf) >/dev/null 2>&1) || \
	  echo "note: perf could not be installed; profiling will be skipped"

BEFORE ?= HEAD
AFTER  ?= worktree
ROUTES ?= /plaintext,/api/devices,/api/devices/preserialized,/api/devices/cached,/state/fat,/state/arc
# Any two servers instead of two builds: BEFORE_CMD='my-server --listen {addr}' AFTER_CMD='…'
# (ROUTES then any paths of theirs). AA=N: N sessions of AFTER against itself (this runner's
# false alarms and resolution, docs/CI.md).
AB_SIDES = $(if $(BEFORE_CMD),--before-cmd "$(BEFORE_CMD)" --after-cmd "$(AFTER_CMD)",\
  --before $(BEFORE) --after $(AFTER) --profile $(PROFILE) --frameworks $(FRAMEWORKS) --layers $(LAYERS) \
  $(if $(BEFORE_DEPS),--before-deps '$(BEFORE_DEPS)') $(if $(AFTER_DEPS),--after-deps '$(AFTER_DEPS)'))
ab: $(BUILD_CLIENT) ## Did my change make it faster? BEFORE=<git ref> AFTER=<git ref|worktree> (or BEFORE_CMD/AFTER_CMD; BEFORE_DEPS=axum=0.8.1) side by side
	$(CLIENT) ab $(AB_SIDES) --routes '$(ROUTES)' \
	  --duration $(DURATION) --warmup $(WARMUP) --rounds $(ROUNDS) --connections $(CONNECTIONS) \
	  --server-cpus $(SERVER_CPUS) --client-cpus $(CLIENT_CPUS) --out $(OUT) $(if $(NO_BUILD),--no-build) \
	  $(if $(AA),--aa $(AA)) $(if $(LOAD_PERCENT),--load-percent $(LOAD_PERCENT)) \
	  $(if $(COUNT),--count $(if $(NO_PERF),--no-perf))

# What a request costs, counted (docs/METHODOLOGY.md, "Counted, not timed"): per framework and
# route, a server process under callgrind, one under memcheck and one native under perf stat each
# answer N and 2N requests (N at most REQUESTS), REPEATS times; the difference is one request's
# instructions, allocations, bytes, system calls, context switches and page faults. PROFILE=debug
# counts the `profiling` build (release with debug = true, what `make bench-debug` measures); LAYERS
# is one number here. Needs valgrind and perf (apt-get install valgrind linux-perf; NO_PERF=1 without perf).
NO_PERF  ?=
# HTTP2_STREAMS=1,16: every route also counted over HTTP/2 with prior knowledge (h2c), one row per
# value with that many requests at once on the connection, each set against HTTP/1.1.
HTTP2_STREAMS ?=
REQUESTS ?= 2000
REPEATS  ?= 3
COUNT_PROFILE = $(if $(filter debug,$(PROFILE)),profiling,$(PROFILE))
count: prereqs-count $(BUILD_CLIENT) ## Instructions, allocations, bytes, system calls per request, counted (callgrind, memcheck, perf): PROFILE=debug for the debug build
	$(CLIENT) count --profile $(COUNT_PROFILE) --frameworks $(FRAMEWORKS) $(if $(MIDDLEWARE),--middleware,$(if $(FILLER_ROUTES),--filler-routes $(FILLER_ROUTES),--routes '$(ROUTES)')) --requests $(REQUESTS) \
	  --repeats $(REPEATS) --layers $(LAYERS) --server-cpus $(SERVER_CPUS) --client-cpus $(CLIENT_CPUS) --out $(OUT) \
	  $(if $(NO_BUILD),--no-build) $(if $(NO_PERF),--no-perf) $(if $(HTTP2_STREAMS),--http2-streams $(HTTP2_STREAMS))

# Did upgrading make it slower: FRAMEWORK's server built with each of RELEASES (oldest first) of
# CRATE (default: the framework's own), each in a worktree of HEAD with `cargo update --precise`,
# then counted as `make count` counts, each release against the one before it and the newest.
versions: prereqs-count $(BUILD_CLIENT) ## Counts per request of FRAMEWORK over RELEASES=a,b,… of CRATE (default: the framework's own)
	$(CLIENT) versions --profile $(COUNT_PROFILE) --framework $(FRAMEWORK) $(if $(CRATE),--crate $(CRATE)) --releases $(RELEASES) --routes '$(ROUTES)' \
	  --requests $(REQUESTS) --repeats $(REPEATS) --layers $(LAYERS) --server-cpus $(SERVER_CPUS) \
	  --client-cpus $(CLIENT_CPUS) --out $(OUT) $(if $(NO_BUILD),--no-build) $(if $(NO_PERF),--no-perf)

memory: $(BUILD_CLIENT) ## Resident memory (idle, busy) and live heap (idle, memcheck) per connection, 1 to 4096, and kept after the load, per framework
	$(CLIENT) memory --profile $(PROFILE) --frameworks $(FRAMEWORKS) --server-cpus $(SERVER_CPUS) \
	  --client-cpus $(CLIENT_CPUS) --out $(OUT) $(if $(NO_BUILD),--no-build) $(if $(NO_HEAP),--no-heap) \
	  $(if $(PUT_BODY_BYTES),--put-body-bytes $(PUT_BODY_BYTES))

bench-all: bench bench-debug ## Both profiles; the second report shows them side by side

bench-micro: ## Criterion micro-benchmarks: state clones, payload serialization
	$(CARGO) bench --locked -p common --bench state_and_payload

# `make test` lints on the tests' own build: clippy-driver compiles the workspace's crates as rustc
# does and checks clippy's lints on the way (Cargo's RUSTC_WORKSPACE_WRAPPER, what `cargo clippy`
# sets; CLIPPY_ARGS, its arguments, as cargo-clippy joins them), so a fresh clone builds the
# dependencies once instead of once checked for clippy and once built for the tests.
# bench/test-lint-gate.sh proves that the wrapper fails a lint before anything is built with it.
# CARGO_INCREMENTAL=0: a fresh clone's build of the workspace crates takes a quarter less time
# (10 s here) without incremental compilation's bookkeeping, which only a rebuild would use.
LINTED = CARGO_INCREMENTAL=0 RUSTC_WORKSPACE_WRAPPER=clippy-driver CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# The integration tests wait for their lane (tests/integration/util.rs), not for a core: a
# thread per test (the binary holds under 256) puts every test in its lane's queue at once, so
# each lane runs full and once rather than in turns with tails (279 s here against 324 s on 16:
# bench/runs/2026-12-06-test-times, LANE_TIMES=FILE logs each test's lane and time).
TEST_THREADS ?= 256

test: prereqs-test fmt test-scripts ## fmt check, clippy -D warnings, every test, docs
	$(LINTED) bash bench/test-lint-gate.sh
	$(LINTED) $(CARGO) test --workspace --all-targets --locked --no-run
	# The examples as programs too: the count tests start bare_server.
	$(LINTED) $(CARGO) build --workspace --examples --locked
	$(LINTED) $(CARGO) test --workspace --locked --lib --bins --examples --benches --test routes --test server_edges
	$(LINTED) $(CARGO) test --workspace --locked --test integration -- --test-threads $(TEST_THREADS)
	$(LINTED) $(CARGO) test --workspace --doc --locked
	# The docs of the client and common (the servers' want their frameworks checked: `make doc`).
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --locked -p common -p bench-client

doc: ## Every crate's docs, rustdoc warnings as errors (make test checks common's and the client's)
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --locked

TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
# Two hosts in network namespaces (root): the plain rehearsal (also in `make test`) and the shaped
# links (tbf, random loss, netem where the kernel has it), with the release client and server-axum.
# TWO_HOSTS_DURATION_S sets each run's measured seconds (default 3).
two-hosts: ## Server and clients in two network namespaces over veth (127/8), shaped links; root
	$(CARGO) build --locked --release -p bench-client -p server-axum
	BENCH_BIN_DIR=$(abspath $(TARGET_DIR))/release $(CARGO) test --locked -p bench-client --test integration \
	  two_hosts -- --include-ignored --nocapture --test-threads 1

ROUNDS_OVERHEAD ?= 6
metrics-overhead: ## Scraped vs unscraped load side by side (paired rounds): is serving /metrics free?
	bash bench/metrics-overhead.sh $(ROUNDS_OVERHEAD)

# Container images for Kubernetes (docs/SCALE-OUT.md, "On Kubernetes"): REGISTRY=registry.example/bench TAG=1
REGISTRY ?= registry.example/bench
TAG      ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
IMAGES    = bench-client server-actix server-axum server-rocket
images: ## docker build the four images from this workspace: REGISTRY=… TAG=…
	for b in $(IMAGES); do docker build -f common/Dockerfile --build-arg BIN=$$b -t $(REGISTRY)/$$b:$(TAG) . || exit 1; done

push: images ## docker push them
	for b in $(IMAGES); do docker push $(REGISTRY)/$$b:$(TAG) || exit 1; done

.PHONY: test-scripts
# Mutation testing where the numbers are made: the statistics, the HTTP
# framing, the window accounting and the figures, the open-loop schedule, the
# deltas, and the catalog's refusals. Slow on 2 cores (an hour or more), so
# not part of `make test`; results in mutants.out/ (caught.txt, missed.txt).
MUTANTS_FILES = -f bench-client/src/analysis/mod.rs -f bench-client/src/analysis/regression.rs -f bench-client/src/engine/wire/http1/mod.rs -f bench-client/src/engine/wire/http1/refusal.rs -f bench-client/src/engine/stats.rs \
  -f bench-client/src/engine/schedule.rs -f bench-client/src/measure/figures.rs -f bench-client/src/results/deltas.rs
mutants: ## Mutation testing (cargo-mutants) of the statistics, framing, windows, deltas and catalog; slow
	command -v cargo-mutants >/dev/null || $(CARGO) install --locked cargo-mutants
	$(CARGO) mutants -p bench-client $(MUTANTS_FILES) -- --lib
	$(CARGO) mutants -p common -f common/src/catalog.rs

test-scripts: ## How bench/client-vs-wrk.sh counts (canned outputs); docs/ci/benchmark.yml through actionlint
	bash bench/test-counting.sh
	bash bench/test-workflow.sh
	bash bench/test-prereqs.sh

fmt:
	$(CARGO) fmt --all --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
