//! Linux plumbing the client needs around its measurements: CPU lists and
//! pinning, what `/proc` says about a process, the open-file limit,
//! server child processes, and the files it writes (checked, atomic, kept). It knows no HTTP and no suite, and imports
//! nothing else of the crate.

mod affinity;
mod limits;
mod noise;
mod output;
mod proc;
mod server_process;

pub use self::affinity::{CpuList, affinity_of};
pub use self::limits::{SPARE_FDS, ensure_fds_for};
pub use self::noise::{BUSY_PERCENT, noise_check};
pub use self::output::{NotWritten, Unwritable, prepare_file, prepare_folder, write_atomic, write_or_keep};
pub use self::proc::{
    Resident, hostname, listener_in_group, monotonic_ns, open_fds, peak_rss_bytes, pids_named, process_alive,
    process_cpu_s, process_name, resident, rss_bytes, set_nice, sleep_until,
};
pub use self::server_process::{STOP_GRACE, ServerProcess};
