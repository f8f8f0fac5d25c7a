//! The legends under the report's tables: what a column means, in a
//! sentence or two, naming the section of `docs/METHODOLOGY.md` that gives
//! the method and its sources. The method itself lives in the docs, not in
//! string literals.

/// Under the delta table, pairing by rounds.
pub(super) const DELTAS_BY_ROUNDS: &str = "\n`before`/`after`: median successful requests per second over the rounds; \
    `change`: the geometric mean of the per-round ratios − 1 with its 95 % Student-t interval \
    (docs/METHODOLOGY.md, “The change and its 95 % confidence interval”). CV: round-to-round coefficient of variation.\n";

/// Under the delta table, pairing by slices.
pub(super) const DELTAS_BY_SLICES: &str = "\n`before`/`after`: median successful requests per second of each variant's own \
    slices over the rounds; `change`: the Hodges–Lehmann estimate of the per-block ratios − 1 with its distribution-free 95 % \
    interval (docs/METHODOLOGY.md, “Pairing by slices”). CV: round-to-round coefficient of variation.\n";

/// Under the delta table, pairing by slices, a new server every round.
pub(super) const DELTAS_BY_SLICES_PER_ROUND: &str = "\n`before`/`after`: median successful requests per second \
    of each variant's own slices over the rounds; `change`: the Hodges–Lehmann estimate of the per-block ratios − 1, its 95 % \
    interval spanning the rounds, each on a new server process (docs/METHODOLOGY.md, “Pairing by slices”). \
    CV: round-to-round coefficient of variation.\n";

/// Under the delta and `ab` tables: the µs column.
pub(super) const SAVED_PER_REQUEST: &str = "`server CPU saved per request`: the baseline's µs of server CPU per \
    successful request minus the changed route's, mean over the rounds with its 95 % Student-t interval. Neither \
    it nor the percentage is a constant of the code: both move between hosts of different speed (docs/FINDINGS.md, \
    \"what a re-run repeats\"), so set two builds against each other in one session.\n";

/// Under the `ab` table.
pub(super) const AB: &str = "\nBoth servers run on the same CPUs, started anew every round, the client alternating \
    between them every slice; `change` is the Hodges–Lehmann estimate of the per-block ratios − 1, its interval \
    spanning the rounds' processes (docs/METHODOLOGY.md, “Two builds”).\n";

/// Under the layer sweep.
pub(super) const SWEEP: &str = "\nCells: successful requests per second (geometric mean over rounds) · server CPU time \
    per request. `added per layer`: least-squares slope of the cost per request over the layer count.\n";

/// Under the in-proportion table.
pub(super) const PROPORTION: &str = "\nCells: µs of server CPU per successful request (the server's CPU time ÷ its \
    successful requests; geometric mean over the rounds of the route's own scenario, the runs its deltas pair).\n";

/// Under the in-proportion deltas, with `/fortunes` measured.
pub(super) const SAVED_WITH_FORTUNES: &str = "\n`saved per request`: the baseline's cost minus the changed route's \
    (negative: the change costs more); its share of a `/fortunes` request (a SQLite read, a sort, an HTML page) \
    reads it against real work.\n";

/// Under the in-proportion deltas, without `/fortunes`.
pub(super) const SAVED_WITHOUT_FORTUNES: &str = "\n`saved per request`: the baseline's cost minus the changed route's \
    (negative: the change costs more). Add `fortunes` to the scenarios to read each saving against a request that \
    does real work.\n";

/// Above the cost-of-profiling table.
pub(super) const PROFILING_COST: &str = "What perf costs each run type, measured in this session: its rounds \
    alternate with perf attached and without, each round a new server process of the profiling build, so \
    the interval (Welch, over the rounds) holds the spread between processes. What the build itself costs \
    against release (`debug = true` and frame pointers) is in the profiles side by side, from another session.\n\n";

/// Under the flame-graph table.
pub(super) const CUT_STACKS: &str = "\n`kept`: the server CPU the samples stand for over the CPU measured in the \
    same slices (perf yields its CPU to the client and loses samples when it falls behind; the differentials \
    scale each side back to the measured CPU); `cut stacks`: samples whose stack does not reach its thread's entry, so their \
    callers go uncredited; `[unknown]`: samples with a frame perf could not name.\n";

/// Above the differential flame graphs.
pub(super) const DIFFERENTIALS: &str = "\nDifferential flame graphs, per request (each side's server CPU ÷ its successful \
    requests): red grew, blue shrank; drawn with before's widths, so what the change removed stays visible.\n\n";

/// Under `compare`'s table when rows are read against the floor.
pub(super) fn against_floor(session_sd_percent: f64) -> String {
    format!(
        "\n`change`: of each run's rate over its round's floor (`/plaintext`), widened by a session SD of \
         {session_sd_percent:.1} % a side (docs/METHODOLOGY.md, “Comparing two results files”); the floor rows \
         are raw, not widened or judged.\n"
    )
}

/// Under the latency table (`--load-percent`).
pub(super) const LATENCY: &str = "\nEach block of slices gives every variant's percentile from its own requests (a \
    percentile needs ten requests beyond it in the block, so p99.9 needs 10,000); `latency change`: the \
    Hodges–Lehmann estimate of the per-block ratios − 1 with the interval of the throughput's deltas, over the \
    rounds' processes; above zero is higher latency, called slower (docs/METHODOLOGY.md, “Latency at a fixed \
    load”).\n";

/// Under the delta and `ab` tables: verdicts and flags.
pub(super) const VERDICTS_AND_FLAGS: &str = "`inconclusive (±N %)`: no change was found, but the interval reaches \
    beyond `--threshold-percent` on a side, to N % (its end farthest from zero), so a change that size is not \
    ruled out: more rounds narrow it. \
    `flags`: of the runs behind the row, `client-bound` (server under 95 % busy), `drift` (its windows trend), \
    `short` (a shortfall: connections, the client behind its schedule, churn), `waited on server` (open loop: \
    requests fell due while every connection waited on the server, its latency), `failures` (failed requests).\n";

/// Under the HTTP/2 settings each server granted.
pub(super) const HTTP2_SETTINGS: &str = "Each framework's defaults, read from its server's first `SETTINGS` frame \
over h2c in preflight: the `http2` scenario's deltas were measured under them, one stream per connection \
(the client never opens more than a server grants).\n\n";
