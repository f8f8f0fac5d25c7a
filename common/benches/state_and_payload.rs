//! Micro-benchmarks of what the `/state/*` and `/api/devices*` routes differ
//! by: cloning the 35-field `FatState` against the one-`Arc` `AppState`, on
//! one thread and on two threads cloning the same state at the same moment
//! (the reference counts then bounce between the cores' caches), with and
//! without dropping the clones; and serializing the devices against copying
//! the preserialized bytes.
//!
//! Run with `make bench-micro` (`cargo bench -p common`). For reference, the
//! application that inspired the fat state reported 382 ns → 12 ns per clone
//! on one thread and about 1.6 µs → 79 ns with two threads.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use common::{AppState, FatState};
use criterion::{Criterion, criterion_main};

/// Runs `iters` clone-and-drop of `state` on each of two threads started
/// together; returns the wall time, so criterion reports the time per clone
/// as each thread sees it while the other clones too.
fn two_threads<S: Clone + Sync>(state: &S, iters: u64) -> Duration {
    let barrier = Barrier::new(3);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                barrier.wait();
                for _ in 0..iters {
                    drop(black_box(state.clone()));
                }
                barrier.wait();
            });
        }
        barrier.wait();
        let start = Instant::now();
        barrier.wait();
        start.elapsed()
    })
}

fn state_clone(c: &mut Criterion) {
    let fat = FatState::new();
    let arc = AppState::new();
    let mut group = c.benchmark_group("state_clone");
    group.bench_function("fat/1_thread/clone", |b| b.iter_with_large_drop(|| black_box(&fat).clone()));
    group.bench_function("arc/1_thread/clone", |b| b.iter_with_large_drop(|| black_box(&arc).clone()));
    group.bench_function("fat/1_thread/clone_and_drop", |b| b.iter(|| drop(black_box(&fat).clone())));
    group.bench_function("arc/1_thread/clone_and_drop", |b| b.iter(|| drop(black_box(&arc).clone())));
    group.bench_function("fat/2_threads/clone_and_drop", |b| b.iter_custom(|iters| two_threads(&fat, iters)));
    group.bench_function("arc/2_threads/clone_and_drop", |b| b.iter_custom(|iters| two_threads(&arc, iters)));
    group.finish();
}

fn payload(c: &mut Criterion) {
    let mut group = c.benchmark_group("payload");
    group.bench_function("per_request/build_and_serialize", |b| b.iter(common::devices_json));
    group.bench_function("preserialized/copy", |b| b.iter(|| black_box(common::preserialized_devices()).to_vec()));
    group.finish();
}

// criterion's macro generates an undocumented `pub fn benches`.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::state_clone, super::payload);
}
criterion_main!(group::benches);
