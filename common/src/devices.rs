//! The device list and its two payloads: serialized on every request (the
//! baseline) and preserialized once.

use lazy_static::lazy_static;
use serde::{Deserialize, Serialize};

/// One device of the fleet, as an application would load it from its store.
///
/// Serialized as `{"id":1,"mac":"5F-33-CC-1F-43-82","firmware":"2.1.6"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    /// Numeric identifier, 1 to 5 in [`devices`].
    pub id: u32,
    /// MAC address, six dash-separated upper-case hex pairs.
    pub mac: String,
    /// Firmware version, `major.minor.patch`.
    pub firmware: String,
}

/// The five devices every `/api/devices*` route serves.
///
/// Builds the list anew on every call (five heap-allocated `String` pairs),
/// as a handler that loads its data per request would: this allocation is part
/// of the per-request baseline the preserialized payload is compared against.
pub fn devices() -> Vec<Device> {
    [
        (1, "5F-33-CC-1F-43-82", "2.1.6"),
        (2, "EF-2B-C4-F5-D6-34", "2.1.5"),
        (3, "62-46-13-B7-B3-A1", "3.0.0"),
        (4, "96-A8-DE-5B-77-14", "1.0.1"),
        (5, "7E-3B-62-A6-09-12", "3.5.6"),
    ]
    .into_iter()
    .map(|(id, mac, firmware)| Device { id, mac: mac.to_owned(), firmware: firmware.to_owned() })
    .collect()
}

/// Serializes [`devices`] with `serde_json` (compact): 271 bytes.
///
/// This is what a server does when it serializes on every request; the
/// frameworks' own JSON responders produce the same bytes.
///
/// # Panics
/// Never in practice: serializing plain strings and integers cannot fail.
pub fn devices_json() -> Vec<u8> {
    serde_json::to_vec(&devices()).expect("devices serialize to JSON")
}

lazy_static! {
    static ref PRESERIALIZED: Vec<u8> = devices_json();
}

/// The devices JSON, serialized once on first use and then served as a
/// `'static` body: byte-identical to [`devices_json`] (271 bytes).
pub fn preserialized_devices() -> &'static [u8] {
    &PRESERIALIZED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_the_documented_271_bytes() {
        let json = devices_json();
        assert_eq!(json.len(), 271);
        assert!(json.starts_with(br#"[{"id":1,"mac":"5F-33-CC-1F-43-82","firmware":"2.1.6"},"#));
        assert!(json.ends_with(br#"{"id":5,"mac":"7E-3B-62-A6-09-12","firmware":"3.5.6"}]"#));
    }

    #[test]
    fn preserialized_is_byte_identical_to_per_request() {
        assert_eq!(preserialized_devices(), devices_json().as_slice());
        // Served from one static allocation, not rebuilt.
        assert!(std::ptr::eq(preserialized_devices(), preserialized_devices()));
    }

    #[test]
    fn devices_are_the_five_of_the_fleet() {
        let d = devices();
        assert_eq!(d.iter().map(|d| d.id).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
        assert_eq!(d[2].mac, "62-46-13-B7-B3-A1");
        assert_eq!(d[4].firmware, "3.5.6");
    }
}
