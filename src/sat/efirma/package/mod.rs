//! A downloaded package: a ZIP of `<UUID>.xml` CFDI, or of `~`-separated metadata `.txt`
//! files. Read one entry at a time, with caps, so a hostile or broken package cannot
//! exhaust memory (a ZIP's declared sizes are not trusted: reads are bounded).
//!
//! Entries that are not what the package should hold are skipped: folders and anything
//! inside one (`__MACOSX/`), other extensions, `.xml` files that are not XML, `.txt`
//! files without the metadata header, and third-party data (`*_tercero.txt`: the
//! `RfcACuentaTerceros` of some rows, which the service does not record).

use std::io::{BufRead, BufReader, Cursor, Read};
use std::str::FromStr;

use rust_decimal::Decimal;
use zip::ZipArchive;

use crate::sat::Metadata;

/// The documented caps.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Entries in one package (a request yields at most 200,000 CFDI).
    pub max_entries: usize,
    /// Uncompressed bytes of one CFDI XML.
    pub max_xml_bytes: u64,
    /// Bytes of one metadata line.
    pub max_line_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_entries: 250_000,
            max_xml_bytes: 32 * 1024 * 1024,
            max_line_bytes: 64 * 1024,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error("the package is not a ZIP archive: {0}")]
    NotZip(String),
    #[error("the package has {found} entries, more than the {limit} allowed")]
    TooManyEntries { found: usize, limit: usize },
    #[error("{name} in the package is larger than {limit} bytes")]
    EntryTooLarge { name: String, limit: u64 },
    #[error("{name} in the package cannot be read: {message}")]
    Unreadable { name: String, message: String },
}

/// One CFDI of a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CfdiFile {
    pub name: String,
    pub xml: Vec<u8>,
}

/// How many metadata rows were read, and how many were malformed and left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetadataCount {
    pub rows: u64,
    pub skipped: u64,
}

pub struct Package {
    archive: ZipArchive<Cursor<Vec<u8>>>,
    limits: Limits,
}

fn unreadable(name: &str, e: impl std::fmt::Display) -> PackageError {
    PackageError::Unreadable {
        name: name.to_string(),
        message: e.to_string(),
    }
}

impl Package {
    pub fn open(bytes: Vec<u8>) -> Result<Self, PackageError> {
        Self::open_with(bytes, Limits::default())
    }

    pub fn open_with(bytes: Vec<u8>, limits: Limits) -> Result<Self, PackageError> {
        let archive =
            ZipArchive::new(Cursor::new(bytes)).map_err(|e| PackageError::NotZip(e.to_string()))?;
        if archive.len() > limits.max_entries {
            return Err(PackageError::TooManyEntries {
                found: archive.len(),
                limit: limits.max_entries,
            });
        }
        Ok(Self { archive, limits })
    }

    /// The top-level entry `index`'s name if it ends with `extension`.
    fn entry_name(&self, index: usize, extension: &str) -> Option<String> {
        let name = self.archive.name_for_index(index)?.ok()?;
        let top_level = !name.contains(['/', '\\']);
        let matches = name.to_ascii_lowercase().ends_with(extension);
        (top_level && matches).then(|| name.into_owned())
    }

    /// The CFDI XML files, one at a time.
    pub fn cfdis(&mut self) -> CfdiFiles<'_> {
        CfdiFiles {
            package: self,
            next: 0,
        }
    }

    fn read_cfdi(&mut self, index: usize) -> Result<Option<CfdiFile>, PackageError> {
        let Some(name) = self.entry_name(index, ".xml") else {
            return Ok(None);
        };
        let limit = self.limits.max_xml_bytes;
        let file = self
            .archive
            .by_index(index)
            .map_err(|e| unreadable(&name, e))?;
        if file.size() > limit {
            return Err(PackageError::EntryTooLarge { name, limit });
        }
        let mut xml = Vec::with_capacity(usize::try_from(file.size()).unwrap_or(0));
        file.take(limit + 1)
            .read_to_end(&mut xml)
            .map_err(|e| unreadable(&name, e))?;
        if xml.len() as u64 > limit {
            return Err(PackageError::EntryTooLarge { name, limit });
        }
        Ok(looks_like_xml(&xml).then_some(CfdiFile { name, xml }))
    }

    /// Streams every metadata row, in package order, to `each`; the first error (the
    /// package's or `each`'s) stops the reading.
    pub fn for_each_metadata<E: From<PackageError>>(
        &mut self,
        mut each: impl FnMut(Metadata) -> Result<(), E>,
    ) -> Result<MetadataCount, E> {
        let mut count = MetadataCount::default();
        for index in 0..self.archive.len() {
            let Some(name) = self.entry_name(index, ".txt") else {
                continue;
            };
            if name.to_ascii_lowercase().ends_with("_tercero.txt") {
                continue;
            }
            let max_line = self.limits.max_line_bytes;
            let file = self
                .archive
                .by_index(index)
                .map_err(|e| unreadable(&name, e))?;
            let mut lines = Lines::new(BufReader::new(file), max_line);
            let Some(header) = lines.next_line().map_err(|e| unreadable(&name, e))? else {
                continue;
            };
            let Some(columns) = Columns::from_header(&header) else {
                continue; // not a metadata file
            };
            while let Some(line) = lines.next_line().map_err(|e| unreadable(&name, e))? {
                if line.trim().is_empty() {
                    continue;
                }
                match columns.metadata(&line) {
                    Some(m) => {
                        count.rows += 1;
                        each(m)?;
                    }
                    None => count.skipped += 1,
                }
            }
        }
        Ok(count)
    }
}

/// See [`Package::cfdis`].
pub struct CfdiFiles<'a> {
    package: &'a mut Package,
    next: usize,
}

impl Iterator for CfdiFiles<'_> {
    type Item = Result<CfdiFile, PackageError>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.next < self.package.archive.len() {
            let index = self.next;
            self.next += 1;
            match self.package.read_cfdi(index) {
                Ok(Some(file)) => return Some(Ok(file)),
                Ok(None) => {}
                Err(e) => return Some(Err(e)),
            }
        }
        None
    }
}

/// The first character after an optional BOM and whitespace opens a tag.
fn looks_like_xml(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<')
}

/// Lines of at most `max` bytes (a longer one is an error, not an allocation).
struct Lines<R> {
    reader: R,
    max: usize,
    buf: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R, max: usize) -> Self {
        Self {
            reader,
            max,
            buf: Vec::new(),
        }
    }

    fn next_line(&mut self) -> std::io::Result<Option<String>> {
        self.buf.clear();
        let limit = u64::try_from(self.max)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let read = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.buf)?;
        if read == 0 {
            return Ok(None);
        }
        if self.buf.len() > self.max {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a line is longer than {} bytes", self.max),
            ));
        }
        let text = String::from_utf8_lossy(&self.buf);
        Ok(Some(text.trim_end_matches(['\r', '\n']).to_string()))
    }
}

/// The metadata columns, located by the header's names (older files carry extra ones).
struct Columns {
    names: Vec<String>,
}

impl Columns {
    fn from_header(line: &str) -> Option<Self> {
        let line = line.trim_start_matches('\u{feff}');
        let names: Vec<String> = line
            .split('~')
            .map(|n| n.trim().to_ascii_lowercase())
            .collect();
        (names.first().map(String::as_str) == Some("uuid")).then_some(Self { names })
    }

    fn field<'l>(&self, fields: &[&'l str], name: &str) -> &'l str {
        self.names
            .iter()
            .position(|n| n == name)
            .and_then(|i| fields.get(i))
            .map_or("", |f| f.trim())
    }

    fn metadata(&self, line: &str) -> Option<Metadata> {
        let fields: Vec<&str> = line.split('~').collect();
        if fields.len() != self.names.len() {
            return None;
        }
        let get = |name: &str| self.field(&fields, name);
        let non_empty = |name: &str| Some(get(name).to_string()).filter(|s| !s.is_empty());
        let uuid = get("uuid").to_ascii_uppercase();
        if uuid.is_empty() {
            return None;
        }
        let effect = get("efectocomprobante").to_ascii_uppercase();
        let cancelled = get("estatus") == "0";
        let local_time = crate::sat::ciec::local_time;
        Some(Metadata {
            uuid,
            issuer_tax_id: get("rfcemisor").to_ascii_uppercase(),
            issuer_name: non_empty("nombreemisor"),
            receiver_tax_id: get("rfcreceptor").to_ascii_uppercase(),
            receiver_name: non_empty("nombrereceptor"),
            issued_at: local_time(get("fechaemision")),
            certified_at: local_time(get("fechacertificacionsat")),
            total: Decimal::from_str(get("monto")).ok(),
            invoice_type: matches!(effect.as_str(), "I" | "E" | "T" | "N" | "P").then_some(effect),
            cancelled,
            cancelled_at: local_time(get("fechacancelacion")).filter(|_| cancelled),
        })
    }
}

#[cfg(test)]
mod tests;
