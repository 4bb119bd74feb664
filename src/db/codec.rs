//! How stored documents (and event payloads, `db::events`) are encoded. Every document
//! row names its codec, so rows written before compression (`identity`) read back
//! unchanged forever, and a row's codec value never changes meaning: a new encoding (another level needs none; a dictionary would)
//! gets a new name.

use anyhow::{bail, Context};
use std::cell::RefCell;
use std::io;
use zstd::bulk::{Compressor, Decompressor};

/// zstd's level for new documents, chosen by measurement (BENCHMARKS.md, "Disk"):
/// level 6 shrinks sandbox and real CFDI by about 1% more for 1.7 times the CPU,
/// level 19 by 2% more for 19 times; level 1 saves 1% less for 0.8 times.
pub const LEVEL: i32 = 3;

/// A zstd dictionary for CFDI XML, trained on the real CFDI in `tests/fixtures/cfdi-samples`
/// only (never on sandbox documents, which would flatter the benchmark) with
/// `zstd --train tests/fixtures/cfdi-samples/*.xml --maxdict=4096 --dictID=1 -3 -o cfdi1.dict`
/// (zstd 1.5.4). Rows compressed with it say `zstd-cfdi1`, so this file never changes:
/// a better dictionary is a new file with a codec name of its own.
const CFDI1: &[u8] = include_bytes!("cfdi1.dict");

/// A zstd dictionary for event payloads (their keys and shape are the service's own),
/// trained on the `invoice.created` payloads of the same real samples by
/// `bench/events_dict.py` (dictionary ID 2). Never changes, like `CFDI1`.
const EVENTS1: &[u8] = include_bytes!("events1.dict");

/// Frames claiming more than this are refused when decoding, so a corrupted header
/// cannot make a read allocate without bound; larger documents (XML is limited to
/// 20 MiB when parsed) are stored as they are.
const MAX_DECODED: usize = 256 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// The bytes as received.
    Identity,
    /// One zstd frame, no dictionary.
    Zstd,
    /// One zstd frame compressed with the `CFDI1` dictionary.
    ZstdCfdi1,
    /// One zstd frame compressed with the `EVENTS1` dictionary (event payloads).
    ZstdEvents1,
    /// One zstd frame compressed with another document (a PDF: its invoice's XML, as
    /// read back) as a raw-content dictionary.
    ZstdXml,
}

impl Codec {
    /// The value of `documents.codec`.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Identity => "identity",
            Codec::Zstd => "zstd",
            Codec::ZstdCfdi1 => "zstd-cfdi1",
            Codec::ZstdEvents1 => "zstd-events1",
            Codec::ZstdXml => "zstd-xml",
        }
    }

    pub fn from_name(name: &str) -> anyhow::Result<Codec> {
        match name {
            "identity" => Ok(Codec::Identity),
            "zstd" => Ok(Codec::Zstd),
            "zstd-cfdi1" => Ok(Codec::ZstdCfdi1),
            "zstd-events1" => Ok(Codec::ZstdEvents1),
            "zstd-xml" => Ok(Codec::ZstdXml),
            other => bail!("unknown document codec {other:?} (written by a newer cfdi-extract?)"),
        }
    }

    /// The zstd codecs' dictionaries (empty: none), and their slot in `Contexts`.
    /// `ZstdXml`'s dictionary is each document's own, loaded by `encode_with` and
    /// `decode_with` into the contexts of slot 3.
    fn dictionary(self) -> (usize, &'static [u8]) {
        match self {
            Codec::Identity | Codec::Zstd => (0, &[]),
            Codec::ZstdXml => (3, &[]),
            Codec::ZstdCfdi1 => (1, CFDI1),
            Codec::ZstdEvents1 => (2, EVENTS1),
        }
    }
}

/// A document as it is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    pub codec: Codec,
    pub bytes: Vec<u8>,
}

/// Compression contexts, one per zstd codec and thread: making one (and loading a
/// dictionary into it) costs more than compressing a small CFDI.
#[derive(Default)]
struct Contexts {
    writers: [Option<Compressor<'static>>; 4],
    readers: [Option<Decompressor<'static>>; 4],
}

thread_local! {
    static CONTEXTS: RefCell<Contexts> = RefCell::new(Contexts::default());
}

fn ready<T>(slot: &mut Option<T>, make: impl FnOnce() -> io::Result<T>) -> io::Result<&mut T> {
    if slot.is_none() {
        *slot = Some(make()?);
    }
    slot.as_mut().ok_or_else(|| io::Error::other("no context"))
}

/// A compressor at `LEVEL` with a checksum of the content, so a damaged row fails to
/// decode instead of returning different bytes.
fn compressor(dictionary: &[u8]) -> io::Result<Compressor<'static>> {
    let mut c = Compressor::with_dictionary(LEVEL, dictionary)?;
    c.include_checksum(true)?;
    Ok(c)
}

/// `raw` compressed as `codec`; `related` replaces the codec's dictionary (`ZstdXml`).
fn compress(raw: &[u8], codec: Codec, related: Option<&[u8]>) -> io::Result<Vec<u8>> {
    let (slot, dictionary) = codec.dictionary();
    CONTEXTS.with(|cell| {
        let mut contexts = cell.borrow_mut();
        let writer = ready(&mut contexts.writers[slot], || compressor(dictionary))?;
        if let Some(related) = related {
            writer.set_dictionary(LEVEL, related)?;
        }
        writer.compress(raw)
    })
}

fn decompress(
    stored: &[u8],
    codec: Codec,
    related: Option<&[u8]>,
    size: usize,
) -> io::Result<Vec<u8>> {
    let (slot, dictionary) = codec.dictionary();
    CONTEXTS.with(|cell| {
        let mut contexts = cell.borrow_mut();
        let reader = ready(&mut contexts.readers[slot], || {
            Decompressor::with_dictionary(dictionary)
        })?;
        if let Some(related) = related {
            reader.set_dictionary(related)?;
        }
        reader.decompress(stored, size)
    })
}

/// `raw` as `codec` stores it, or as it is when that is not smaller (e.g. a PDF whose
/// streams are already compressed).
fn encode_as(raw: &[u8], codec: Codec) -> Encoded {
    kept_if_smaller(raw, codec, || compress(raw, codec, None))
}

fn kept_if_smaller(
    raw: &[u8],
    codec: Codec,
    compress: impl FnOnce() -> io::Result<Vec<u8>>,
) -> Encoded {
    let compressed = if raw.len() <= MAX_DECODED {
        compress()
    } else {
        Err(io::Error::other("too large to compress"))
    };
    match compressed {
        Ok(bytes) if bytes.len() < raw.len() => Encoded { codec, bytes },
        _ => Encoded {
            codec: Codec::Identity,
            bytes: raw.to_vec(),
        },
    }
}

/// Compresses a document (a PDF) for storing.
pub fn encode(raw: &[u8]) -> Encoded {
    encode_as(raw, Codec::Zstd)
}

/// Compresses a CFDI XML for storing, with the CFDI dictionary.
pub fn encode_xml(raw: &[u8]) -> Encoded {
    encode_as(raw, Codec::ZstdCfdi1)
}

/// Compresses a document with `related` (a PDF: its invoice's XML) as its dictionary: a
/// printed CFDI repeats the XML's seals, UUID, names and amounts, which then cost next
/// to nothing. Read back with `decode_with` and the same `related` bytes.
pub fn encode_with(raw: &[u8], related: &[u8]) -> Encoded {
    kept_if_smaller(raw, Codec::ZstdXml, || {
        compress(raw, Codec::ZstdXml, Some(related))
    })
}

/// Compresses an event's JSON payload for storing, with the events dictionary.
pub fn encode_event(raw: &[u8]) -> Encoded {
    encode_as(raw, Codec::ZstdEvents1)
}

/// The original bytes of a stored document; an error (never a panic) for content its
/// codec cannot read.
pub fn decode(codec: Codec, stored: Vec<u8>) -> anyhow::Result<Vec<u8>> {
    if codec == Codec::ZstdXml {
        bail!("a zstd-xml document is read with its related document (decode_with)");
    }
    decode_frame(codec, stored, None)
}

/// The original bytes of a document `encode_with` stored against `related`.
pub fn decode_with(stored: Vec<u8>, related: &[u8]) -> anyhow::Result<Vec<u8>> {
    decode_frame(Codec::ZstdXml, stored, Some(related))
}

fn decode_frame(codec: Codec, stored: Vec<u8>, related: Option<&[u8]>) -> anyhow::Result<Vec<u8>> {
    if codec == Codec::Identity {
        return Ok(stored);
    }
    let size = zstd::zstd_safe::get_frame_content_size(&stored)
        .ok()
        .flatten()
        .context("a stored document's zstd frame has no readable size")?;
    let size = usize::try_from(size)
        .ok()
        .filter(|s| *s <= MAX_DECODED)
        .context("a stored document's zstd frame claims an impossible size")?;
    let raw = decompress(&stored, codec, related, size)
        .context("a stored document's zstd content is corrupted")?;
    if raw.len() != size {
        bail!("a stored document's zstd content is shorter than its frame says");
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let concept = r#"<cfdi:Concepto ClaveProdServ="01010101" Cantidad="1" Importe="100.00"/>"#;
        format!(
            "<?xml version=\"1.0\"?><cfdi:Comprobante>{}</cfdi:Comprobante>",
            concept.repeat(40)
        )
        .into_bytes()
    }

    #[test]
    fn compressible_documents_round_trip_through_zstd() {
        let raw = sample();
        let encoded = encode(&raw);
        assert_eq!(encoded.codec, Codec::Zstd);
        assert!(
            encoded.bytes.len() < raw.len() / 5,
            "{}",
            encoded.bytes.len()
        );
        assert_eq!(decode(encoded.codec, encoded.bytes).expect("decodes"), raw);
    }

    #[test]
    fn incompressible_and_empty_documents_stay_as_they_are() {
        // Bytes no compressor can shrink (a PDF's deflated stream, say).
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for raw in [noise, Vec::new()] {
            let encoded = encode(&raw);
            assert_eq!(encoded.codec, Codec::Identity);
            assert_eq!(encoded.bytes, raw);
            assert_eq!(decode(Codec::Identity, encoded.bytes).expect("as is"), raw);
        }
    }

    #[test]
    fn xml_round_trips_through_the_cfdi_dictionary_and_only_through_it() {
        let raw = sample();
        let encoded = encode_xml(&raw);
        assert_eq!(encoded.codec, Codec::ZstdCfdi1);
        assert!(
            encoded.bytes.len() < encode(&raw).bytes.len(),
            "the dictionary helps"
        );
        assert_eq!(
            decode(Codec::ZstdCfdi1, encoded.bytes.clone()).expect("decodes"),
            raw
        );
        // A frame that needs the dictionary is not read without it.
        assert!(decode(Codec::Zstd, encoded.bytes).is_err());
    }

    #[test]
    fn the_dictionaries_never_change() {
        // Rows and payloads compressed with a dictionary decode only with its exact
        // bytes: a changed dictionary needs a new file and a new codec, never an edit.
        use sha2::{Digest, Sha256};
        let hex = |dictionary: &[u8]| -> String {
            Sha256::digest(dictionary)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        };
        assert_eq!(
            hex(CFDI1),
            "4181ca217a64abd129d81940fef79c264d1fddb093786f46b33d8ecbfb288e1d"
        );
        assert_eq!(
            hex(EVENTS1),
            "ff5d00a376acfd8ba5c78753ef09872e8b12712c401fc891af9ce7dc35a22218"
        );
    }

    #[test]
    fn event_payloads_round_trip_through_their_dictionary_and_only_through_it() {
        let payload = br#"{"id":"e","event":"invoice.created","source":"invoices/i","resource":{"type":"Invoice","id":"i","path":"invoices/i"},"object":{"id":"i","uuid":"U","status":"active","total":"116.00","currency":"MXN"},"created_at":"t"}"#;
        let encoded = encode_event(payload);
        assert_eq!(encoded.codec, Codec::ZstdEvents1);
        assert!(encoded.bytes.len() < encode(payload).bytes.len());
        assert_eq!(
            decode(Codec::ZstdEvents1, encoded.bytes.clone()).expect("decodes"),
            payload
        );
        assert!(decode(Codec::ZstdCfdi1, encoded.bytes).is_err());
    }

    #[test]
    fn codec_names_are_stable_and_unknown_ones_are_refused() {
        assert_eq!(Codec::ZstdCfdi1.name(), "zstd-cfdi1");
        for codec in [Codec::Identity, Codec::Zstd, Codec::ZstdCfdi1] {
            assert_eq!(Codec::from_name(codec.name()).expect("known"), codec);
        }
        assert_eq!(Codec::Identity.name(), "identity");
        assert_eq!(Codec::Zstd.name(), "zstd");
        let err = Codec::from_name("zstd-dict9").expect_err("unknown");
        assert!(err.to_string().contains("zstd-dict9"), "{err}");
    }

    #[test]
    fn corrupted_content_is_an_error_not_a_panic() {
        let raw = sample();
        let good = encode(&raw).bytes;
        let mut flipped = good.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 0xFF;
        let truncated = good[..good.len() - 4].to_vec();
        let mut huge = good.clone();
        // The frame header's content size field claims far more than any document.
        huge.truncate(4);
        huge.extend_from_slice(&[0xE0, 0, 0, 0, 0, 0, 0, 0x7F]);
        for bad in [
            flipped,
            truncated,
            b"<xml>not zstd</xml>".to_vec(),
            Vec::new(),
            huge,
        ] {
            assert!(decode(Codec::Zstd, bad).is_err());
        }
    }
}
