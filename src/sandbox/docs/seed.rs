//! Deterministic randomness: every value the sandbox produces comes from a
//! ChaCha8 stream whose seed is a SHA-256 of what identifies it, so the output
//! is the same on every run and every machine.

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

/// Purposes of an invoice's streams: each part of an invoice (metadata,
/// lines, installments, seals) can be drawn without drawing the others.
pub(super) const STREAM_META: u64 = 0;
pub(super) const STREAM_ITEMS: u64 = 1;
pub(super) const STREAM_PAYMENTS: u64 = 2;
pub(super) const STREAM_RENDER: u64 = 3;
/// Installment `k` (1-based) of a PPD invoice renders from `STREAM_RENDER_PAYMENT + k`.
pub(super) const STREAM_RENDER_PAYMENT: u64 = 16;

/// SHA-256 of a label such as `"{tax_id}|{direction}|{day}|{purpose}"`,
/// as a 32-byte seed.
pub(super) fn hash_seed(label: &str) -> [u8; 32] {
    Sha256::digest(label.as_bytes()).into()
}

/// One stream of a seed.
pub(super) fn stream(seed: &[u8; 32], stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::from_seed(*seed);
    rng.set_stream(stream);
    rng
}

/// Where an invoice's randomness comes from: its day's seed and its slot in
/// the day. Each (slot, purpose) pair is a stream of its own, so the day
/// stream stays small (types and lifecycles) and any part of an invoice can
/// be redrawn alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct InvoiceSeed {
    day: [u8; 32],
    slot: u64,
}

impl InvoiceSeed {
    pub fn new(day: [u8; 32], index: u32) -> Self {
        // Stream 0 is the day's own stream.
        let slot = u64::from(index) + 1;
        InvoiceSeed { day, slot }
    }

    /// The stream of one purpose (`STREAM_*`, below 256).
    pub fn stream(&self, purpose: u64) -> ChaCha8Rng {
        stream(&self.day, (self.slot << 8) | purpose)
    }
}

/// An upper-case RFC 4122 UUID built from seeded bytes (never OS randomness).
pub(super) fn fiscal_uuid(bytes: [u8; 16]) -> String {
    let uuid = uuid::Builder::from_random_bytes(bytes).into_uuid();
    let mut buf = uuid::Uuid::encode_buffer();
    uuid.hyphenated().encode_upper(&mut buf).to_owned()
}

/// `len` random bytes from `rng`.
pub(super) fn random_bytes(rng: &mut ChaCha8Rng, len: usize) -> Vec<u8> {
    let mut bytes = vec![0; len];
    rng.fill_bytes(&mut bytes);
    bytes
}

/// A uniform index below `len` (non-zero), drawn as a u32 so that the draw
/// is the same on 32- and 64-bit machines.
pub(super) fn index(rng: &mut ChaCha8Rng, len: usize) -> usize {
    rng.random_range(0..len as u32) as usize
}

/// A uniformly chosen element of a non-empty catalog.
pub(super) fn choose<T: Copy>(rng: &mut ChaCha8Rng, items: &[T]) -> T {
    items[index(rng, items.len())]
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard padded base64: fake seals and certificates only need the look.
pub(super) fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |shift: u32| char::from(BASE64[((n >> shift) & 63) as usize]);
        out.push(sextet(18));
        out.push(sextet(12));
        out.push(if chunk.len() > 1 { sextet(6) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(0) } else { '=' });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn fiscal_uuid_is_upper_case_v4() {
        let uuid = fiscal_uuid([0xab; 16]);
        assert_eq!(uuid.len(), 36);
        assert_eq!(uuid, uuid.to_uppercase());
        assert_eq!(&uuid[14..15], "4");
    }
}
