//! The stamp's block every printed CFDI ends with: the TimbreFiscalDigital's data beside
//! the verification QR code, then the seals and the stamp's original string.

use super::text::or_dash;
use super::{Canvas, Font, LEFT};
use crate::cfdi::Stamp;
use crate::format::date_time;

/// Side of the verification QR code, in points (about 3.5 cm).
const QR_SIDE: f32 = 100.0;

/// What the block prints of a document of either class.
pub(super) struct Stamped<'a> {
    pub stamp: Option<&'a Stamp>,
    /// The issuer's seal (Sello).
    pub seal: Option<&'a str>,
    /// The issuer certificate's serial number.
    pub certificate_number: Option<&'a str>,
    /// The SAT's verification payload for the QR code.
    pub verification: Option<String>,
    /// The closing line saying what the page represents.
    pub closing: &'a str,
}

/// The stamp's data beside the verification QR code, then the seals and the
/// stamp's original string.
pub(super) fn block(canvas: &mut Canvas, doc: &Stamped) {
    let Some(stamp) = doc.stamp else {
        canvas.line(Font::Bold, 9.0, "Documento sin timbre fiscal digital.");
        return;
    };
    canvas.room(QR_SIDE + 14.0);
    let top = canvas.y;
    if let Some(payload) = &doc.verification {
        canvas.qr(LEFT, QR_SIDE, payload);
    }
    let text_left = LEFT + QR_SIDE + 12.0;
    canvas.down(8.0);
    for line in [
        format!("Folio fiscal (UUID): {}", or_dash(stamp.uuid.as_deref())),
        format!(
            "Fecha y hora de certificación: {}",
            stamp
                .certified_at
                .as_deref()
                .map_or_else(|| "-".to_owned(), date_time)
        ),
        format!(
            "RFC del proveedor de certificación: {}",
            or_dash(stamp.provider_tax_id.as_deref())
        ),
        format!(
            "No. de serie del certificado del emisor: {}",
            or_dash(doc.certificate_number)
        ),
        format!(
            "No. de serie del certificado del SAT: {}",
            or_dash(stamp.sat_certificate_number.as_deref())
        ),
        format!("Versión del timbre: {}", or_dash(stamp.version.as_deref())),
    ] {
        canvas.paragraph(Font::Regular, 8.0, text_left, &line);
    }
    canvas.y = canvas.y.min(top - QR_SIDE - 14.0);
    for (label, text) in [
        ("Sello digital del CFDI", doc.seal),
        ("Sello digital del SAT", stamp.sat_seal.as_deref()),
        (
            "Cadena original del complemento de certificación digital del SAT",
            Some(stamp.original_string.as_str()),
        ),
    ] {
        if let Some(text) = text.filter(|s| !s.is_empty()) {
            canvas.line(Font::Bold, 7.0, label);
            canvas.line(Font::Regular, 6.0, text);
            canvas.down(3.0);
        }
    }
    canvas.down(6.0);
    canvas.line(Font::Bold, 8.0, doc.closing);
}
