//! The fake SAT's documents and the packages it builds from them: CFDI packages are ZIPs
//! of `<UUID>.xml`; metadata packages a ZIP with one `~`-separated `<package id>.txt`
//! (CRLF lines, header first), as in `tests/fixtures/sat-ws-fixtures/zip/`.

use std::io::{Cursor, Write};

use cfdi_extract::cfdi::Cfdi;
use cfdi_extract::retention::Retention;
use chrono::NaiveDateTime;
use rust_decimal::Decimal;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// One CFDI the fake SAT holds.
#[derive(Debug, Clone)]
pub struct Doc {
    pub uuid: String,
    pub issuer: String,
    pub issuer_name: String,
    pub receiver: String,
    pub receiver_name: String,
    pub provider: String,
    /// `Fecha`, local time.
    pub issued_at: NaiveDateTime,
    pub certified_at: Option<NaiveDateTime>,
    pub total: Decimal,
    /// `TipoDeComprobante` letter.
    pub kind: String,
    pub cancelled_at: Option<NaiveDateTime>,
    pub xml: Vec<u8>,
}

fn local(text: &str) -> Option<NaiveDateTime> {
    NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%dT%H:%M:%S%.f").ok()
}

impl Doc {
    /// Reads what the SAT indexes from a stamped CFDI.
    pub fn from_xml(xml: &[u8]) -> Result<Doc, String> {
        let cfdi = Cfdi::parse_stamped(xml).map_err(|e| e.to_string())?;
        let stamp = cfdi.stamp.as_ref();
        Ok(Doc {
            uuid: cfdi.uuid().map_err(|e| e.to_string())?.to_ascii_uppercase(),
            issuer: cfdi.issuer.tax_id.to_ascii_uppercase(),
            issuer_name: cfdi.issuer.name.clone().unwrap_or_default(),
            receiver: cfdi.receiver.tax_id.to_ascii_uppercase(),
            receiver_name: cfdi.receiver.name.clone().unwrap_or_default(),
            provider: stamp
                .and_then(|s| s.provider_tax_id.clone())
                .unwrap_or_default(),
            issued_at: local(&cfdi.issued_at).ok_or("the CFDI has no valid Fecha")?,
            certified_at: stamp
                .and_then(|s| s.certified_at.as_deref())
                .and_then(local),
            total: cfdi.total,
            kind: cfdi.invoice_type.as_str().to_string(),
            cancelled_at: None,
            xml: xml.to_vec(),
        })
    }

    /// Reads what the SAT indexes from a stamped CFDI de Retenciones: `FechaExp` as the
    /// date (its offset, if written, dropped: the SAT counts local time), the total of
    /// the operation as the amount, and no type.
    pub fn from_retention_xml(xml: &[u8]) -> Result<Doc, String> {
        let r = Retention::parse_stamped(xml).map_err(|e| e.to_string())?;
        let stamp = r.stamp.as_ref();
        let issued_at = r.issued_at.as_deref().unwrap_or_default();
        let receiver = r.receiver.as_ref();
        Ok(Doc {
            uuid: r.uuid().map_err(|e| e.to_string())?.to_ascii_uppercase(),
            issuer: r.issuer.tax_id.to_ascii_uppercase(),
            issuer_name: r.issuer.name.clone().unwrap_or_default(),
            receiver: receiver
                .and_then(|x| x.tax_id())
                .unwrap_or_default()
                .to_ascii_uppercase(),
            receiver_name: receiver.and_then(|x| x.name()).unwrap_or_default().into(),
            provider: stamp
                .and_then(|s| s.provider_tax_id.clone())
                .unwrap_or_default(),
            issued_at: local(issued_at.get(..19).unwrap_or(issued_at))
                .ok_or("the retention has no valid FechaExp")?,
            certified_at: stamp
                .and_then(|s| s.certified_at.as_deref())
                .and_then(local),
            total: r.totals.operation,
            kind: String::new(),
            cancelled_at: None,
            xml: xml.to_vec(),
        })
    }

    /// The metadata line (`~` separated; names cannot carry the separator).
    fn metadata_row(&self) -> String {
        let time = |t: Option<NaiveDateTime>| {
            t.map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
                .unwrap_or_default()
        };
        let clean = |s: &str| s.replace(['~', '\r', '\n'], " ");
        [
            self.uuid.clone(),
            self.issuer.clone(),
            clean(&self.issuer_name),
            self.receiver.clone(),
            clean(&self.receiver_name),
            self.provider.clone(),
            time(Some(self.issued_at)),
            time(self.certified_at),
            self.total.to_string(),
            self.kind.clone(),
            if self.cancelled_at.is_some() {
                "0"
            } else {
                "1"
            }
            .to_string(),
            time(self.cancelled_at),
        ]
        .join("~")
    }
}

const METADATA_HEADER: &str = "Uuid~RfcEmisor~NombreEmisor~RfcReceptor~NombreReceptor~RfcPac~FechaEmision~FechaCertificacionSat~Monto~EfectoComprobante~Estatus~FechaCancelacion";

fn zip(entries: impl IntoIterator<Item = (String, Vec<u8>)>) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, bytes) in entries {
        writer.start_file(name, options).expect("zip entry");
        writer.write_all(&bytes).expect("zip write");
    }
    writer.finish().expect("zip finish").into_inner()
}

/// The packages of a finished request `id`: `(package id, ZIP)`, `per_package` documents
/// each, numbered `_01`, `_02`, ... like the SAT's.
pub fn build(id: &str, docs: &[Doc], metadata: bool, per_package: usize) -> Vec<(String, Vec<u8>)> {
    docs.chunks(per_package.max(1))
        .enumerate()
        .map(|(i, chunk)| {
            let package_id = format!("{id}_{:02}", i + 1);
            let bytes = if metadata {
                let mut text = format!("{METADATA_HEADER}\r\n");
                for doc in chunk {
                    text.push_str(&doc.metadata_row());
                    text.push_str("\r\n");
                }
                zip([(format!("{package_id}.txt"), text.into_bytes())])
            } else {
                zip(chunk
                    .iter()
                    .map(|d| (format!("{}.xml", d.uuid), d.xml.clone())))
            };
            (package_id, bytes)
        })
        .collect()
}
