//! The simulated packages: ZIPs in the SAT's shapes, readable by `webservice::package`.
//! Built from the sandbox's own documents, so the XML is byte for byte what the CIEC
//! sandbox serves.

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::sandbox::docs::{self as sandbox_docs, Direction, SandboxInvoice, SandboxRetention};

/// The most CFDI one package holds.
pub const CFDI_PER_PACKAGE: usize = 200;
/// The most metadata rows one package holds.
pub const METADATA_PER_PACKAGE: usize = 1_000;

/// The metadata file's header, as the SAT writes it.
pub const METADATA_HEADER: &str = "Uuid~RfcEmisor~NombreEmisor~RfcReceptor~NombreReceptor~RfcPac~\
FechaEmision~FechaCertificacionSat~Monto~EfectoComprobante~Estatus~FechaCancelacion";

const SAT_TIME: &str = "%Y-%m-%d %H:%M:%S";

/// One invoice as a listing shows it.
#[derive(Debug, Clone)]
pub struct Listed {
    pub invoice: SandboxInvoice,
    /// Whether the run the package is for listed it first (withheld XML, late
    /// cancellations).
    pub first_listing: bool,
    /// Cancelled as that run sees it.
    pub cancelled: bool,
}

/// One retention document as a listing on the retentions' hosts shows it.
#[derive(Debug, Clone)]
pub struct ListedRetention {
    pub retention: SandboxRetention,
    /// Cancelled as the run the package is for sees it.
    pub cancelled: bool,
}

fn zip_of<'a>(
    entries: impl IntoIterator<Item = (String, Vec<u8>)> + 'a,
) -> anyhow::Result<Vec<u8>> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    // No timestamp feature: entries carry the ZIP epoch, so a package is reproducible.
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, bytes) in entries {
        writer.start_file(name, options)?;
        writer.write_all(&bytes)?;
    }
    Ok(writer.finish()?.into_inner())
}

/// A CFDI package: one `<UUID>.xml` per invoice of `tax_id` in `direction`.
pub fn cfdi_package(
    tax_id: &str,
    direction: Direction,
    invoices: &[SandboxInvoice],
) -> anyhow::Result<Vec<u8>> {
    let mut entries = Vec::with_capacity(invoices.len());
    for inv in invoices {
        let xml = sandbox_docs::render_xml(tax_id, direction, inv)?;
        entries.push((format!("{}.xml", inv.uuid), xml));
    }
    zip_of(entries)
}

/// A metadata package: `<name>.txt` with the header and one row per invoice.
pub fn metadata_package(name: &str, rows: &[Listed]) -> anyhow::Result<Vec<u8>> {
    let mut text = String::with_capacity(200 * (rows.len() + 1));
    text.push_str(METADATA_HEADER);
    text.push('\n');
    for row in rows {
        text.push_str(&metadata_line(row));
        text.push('\n');
    }
    zip_of([(format!("{name}.txt"), text.into_bytes())])
}

fn metadata_line(row: &Listed) -> String {
    let inv = &row.invoice;
    let (certified_at, pac) = sandbox_docs::certification(inv);
    let cancelled_at = inv
        .cancelled_at
        .filter(|_| row.cancelled)
        .map(|t| t.format(SAT_TIME).to_string())
        .unwrap_or_default();
    [
        inv.uuid.as_str(),
        &inv.issuer_tax_id,
        &inv.issuer_name,
        &inv.receiver_tax_id,
        &inv.receiver_name,
        pac,
        &inv.issued_at.format(SAT_TIME).to_string(),
        &certified_at.format(SAT_TIME).to_string(),
        &inv.total.to_string(),
        &inv.invoice_type.to_string(),
        if row.cancelled { "0" } else { "1" },
        &cancelled_at,
    ]
    .join("~")
}

/// A retentions CFDI package: one `<UUID>.xml` per document.
pub fn retention_package(retentions: &[ListedRetention]) -> anyhow::Result<Vec<u8>> {
    let mut entries = Vec::with_capacity(retentions.len());
    for listed in retentions {
        let r = &listed.retention;
        entries.push((
            format!("{}.xml", r.uuid),
            sandbox_docs::render_retention_xml(r)?,
        ));
    }
    zip_of(entries)
}

/// A retentions metadata package: the same columns, `MontoTotOperacion` as the amount
/// and no `EfectoComprobante` (retentions have no type).
pub fn retention_metadata_package(name: &str, rows: &[ListedRetention]) -> anyhow::Result<Vec<u8>> {
    let mut text = String::with_capacity(200 * (rows.len() + 1));
    text.push_str(METADATA_HEADER);
    text.push('\n');
    for row in rows {
        let r = &row.retention;
        let (certified_at, pac) = r.certification();
        let cancelled_at = r
            .cancelled_at
            .filter(|_| row.cancelled)
            .map(|t| t.format(SAT_TIME).to_string())
            .unwrap_or_default();
        let line = [
            r.uuid.as_str(),
            &r.issuer_tax_id,
            &r.issuer_name,
            &r.receiver_tax_id,
            &r.receiver_name,
            pac,
            &r.issued_at.format(SAT_TIME).to_string(),
            &certified_at.format(SAT_TIME).to_string(),
            &r.operation().to_string(),
            "",
            if row.cancelled { "0" } else { "1" },
            &cancelled_at,
        ]
        .join("~");
        text.push_str(&line);
        text.push('\n');
    }
    zip_of([(format!("{name}.txt"), text.into_bytes())])
}
