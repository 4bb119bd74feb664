//! The printed representation (representación impresa) of a sandbox invoice: one
//! US Letter page laid out on the shared [`crate::pdf::Canvas`].

use super::amounts::{amounts, Amounts, Line};
use super::stamp::{Stamp, SAT_CERTIFICATE_NUMBER};
use super::{Currency, Kind, SandboxInvoice};
use crate::pdf::{Canvas, Font, Info, LEFT, RIGHT};

/// The PDF of `invoice`.
pub(super) fn render(invoice: &SandboxInvoice) -> Vec<u8> {
    let details = &invoice.details;
    let amounts = amounts(details.kind, &details.seed, details.currency);
    let stamp = Stamp::new(invoice);
    let mut canvas = Canvas::default();
    header(&mut canvas, invoice);
    parties(&mut canvas, invoice);
    items(&mut canvas, invoice.details.kind, &amounts.lines);
    totals(&mut canvas, invoice, &amounts);
    // The XML's own seals (`sealing`), the placeholders only if it cannot be rendered.
    let printed = super::sealing::seals_of(&invoice.uuid, || super::xml::render(invoice));
    seals(&mut canvas, &stamp, printed.as_ref());
    let title = format!("CFDI {}", invoice.uuid);
    canvas.finish(&Info {
        title: &title,
        producer: "cfdi-extract sandbox",
        created: Some(invoice.issued_at),
    })
}

/// "$12,345.67"-style amount for people.
fn display_money(cents: i64) -> String {
    let digits = (cents.unsigned_abs() / 100).to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}${grouped}.{:02}", cents.unsigned_abs() % 100)
}

fn title(kind: Kind) -> &'static str {
    match kind {
        Kind::IncomePue | Kind::IncomePpd => "FACTURA",
        Kind::Credit => "NOTA DE CRÉDITO",
        Kind::Payroll => "RECIBO DE NÓMINA",
        Kind::Transfer => "CARTA DE TRASLADO",
        Kind::Payment => "COMPLEMENTO DE PAGO",
    }
}

fn type_name(kind: Kind) -> &'static str {
    match kind {
        Kind::IncomePue | Kind::IncomePpd => "I - Ingreso",
        Kind::Credit => "E - Egreso",
        Kind::Payroll => "N - Nómina",
        Kind::Transfer => "T - Traslado",
        Kind::Payment => "P - Pago",
    }
}

fn header(canvas: &mut Canvas, invoice: &SandboxInvoice) {
    let details = &invoice.details;
    canvas.text(Font::Bold, 16.0, LEFT, title(details.kind));
    let serie = format!("Serie {}  Folio {}", details.serie, details.folio);
    canvas.text_right(Font::Bold, 10.0, RIGHT, &serie);
    canvas.down(24.0);
    canvas.line(
        Font::Regular,
        9.0,
        &format!("Folio fiscal (UUID): {}", invoice.uuid),
    );
    canvas.line(
        Font::Regular,
        9.0,
        &format!(
            "Fecha de emisión: {}    Lugar de expedición: {}    Exportación: 01 - No aplica",
            invoice.issued_at.format("%Y-%m-%d %H:%M:%S"),
            details.issuer_zip
        ),
    );
    let currency = match details.currency {
        Currency::Usd { rate_e4 } => {
            format!(
                "USD (tipo de cambio {}.{:04})",
                rate_e4 / 10_000,
                rate_e4 % 10_000
            )
        }
        other => other.code().to_owned(),
    };
    let mut terms = format!(
        "Tipo de comprobante: {}    Moneda: {currency}",
        type_name(details.kind)
    );
    if let Some(method) = details.kind.payment_method() {
        terms.push_str(&format!("    Método de pago: {method}"));
    }
    if let Some(form) = details.payment_form {
        terms.push_str(&format!("    Forma de pago: {form}"));
    }
    canvas.line(Font::Regular, 9.0, &terms);
    canvas.down(4.0);
    canvas.rule();
}

fn parties(canvas: &mut Canvas, invoice: &SandboxInvoice) {
    let details = &invoice.details;
    canvas.line(Font::Bold, 10.0, "Emisor");
    canvas.line(
        Font::Regular,
        9.0,
        &format!(
            "RFC: {}    Nombre: {}",
            invoice.issuer_tax_id, invoice.issuer_name
        ),
    );
    canvas.line(
        Font::Regular,
        9.0,
        &format!("Régimen fiscal: {}", details.issuer_regime),
    );
    canvas.down(4.0);
    canvas.line(Font::Bold, 10.0, "Receptor");
    canvas.line(
        Font::Regular,
        9.0,
        &format!(
            "RFC: {}    Nombre: {}",
            invoice.receiver_tax_id, invoice.receiver_name
        ),
    );
    canvas.line(
        Font::Regular,
        9.0,
        &format!(
            "Domicilio fiscal: {}    Régimen fiscal: {}    Uso CFDI: {}",
            details.receiver_zip, details.receiver_regime, details.use_cfdi
        ),
    );
    if let Some(uuid) = &details.related_uuid {
        canvas.down(4.0);
        canvas.line(
            Font::Regular,
            9.0,
            &format!(
                "CFDI relacionado (01 - Nota de crédito de los documentos relacionados): {uuid}"
            ),
        );
    }
    canvas.down(4.0);
    canvas.rule();
}

/// Column left edges (text) and right edges (amounts) of the items table.
const COL_QTY: f32 = LEFT;
const COL_KEY: f32 = 90.0;
const COL_UNIT: f32 = 150.0;
const COL_DESCRIPTION: f32 = 185.0;
const COL_PRICE_RIGHT: f32 = 500.0;

fn items(canvas: &mut Canvas, kind: Kind, lines: &[Line]) {
    canvas.items_header(
        [COL_QTY, COL_KEY, COL_UNIT, COL_DESCRIPTION],
        COL_PRICE_RIGHT,
    );
    for line in lines {
        canvas.text(Font::Regular, 8.0, COL_QTY, &line.qty.to_string());
        canvas.text(Font::Regular, 8.0, COL_KEY, line.clave);
        canvas.text(Font::Regular, 8.0, COL_UNIT, line.unit);
        let description: String = line.description.chars().take(52).collect();
        canvas.text(Font::Regular, 8.0, COL_DESCRIPTION, &description);
        if kind != Kind::Payment {
            canvas.text_right(
                Font::Regular,
                8.0,
                COL_PRICE_RIGHT,
                &display_money(line.unit_cents),
            );
            canvas.text_right(Font::Regular, 8.0, RIGHT, &display_money(line.amount));
        }
        canvas.down(12.0);
    }
    canvas.down(2.0);
    canvas.rule();
}

fn totals(canvas: &mut Canvas, invoice: &SandboxInvoice, amounts: &Amounts) {
    let kind = invoice.details.kind;
    let discount_label = if kind == Kind::Payroll {
        "Deducciones"
    } else {
        "Descuento"
    };
    let mut rows = vec![("Subtotal", amounts.subtotal)];
    if amounts.discount > 0 {
        rows.push((discount_label, amounts.discount));
    }
    if let Some(iva) = amounts.iva {
        rows.push(("IVA trasladado 16%", iva));
    }
    rows.push(("Total", amounts.total));
    for (label, cents) in rows {
        let font = if label == "Total" {
            Font::Bold
        } else {
            Font::Regular
        };
        canvas.text(font, 9.0, 400.0, label);
        canvas.text_right(font, 9.0, RIGHT, &display_money(cents));
        canvas.down(13.0);
    }
    canvas.down(8.0);
    canvas.rule();
}

fn seals(canvas: &mut Canvas, stamp: &Stamp, printed: Option<&super::sealing::Seals>) {
    let (seal, sat_seal) = match printed {
        Some(p) => (&p.seal, &p.sat_seal),
        None => (&stamp.seal, &stamp.sat_seal),
    };
    for (label, seal) in [
        ("Sello digital del CFDI", seal),
        ("Sello digital del SAT", sat_seal),
    ] {
        canvas.line(Font::Bold, 7.0, label);
        canvas.line(Font::Regular, 6.0, seal);
        canvas.down(3.0);
    }
    canvas.line(
        Font::Regular,
        7.0,
        &format!(
            "No. de serie del certificado del emisor: {}    No. de serie del certificado del SAT: {}",
            stamp.certificate_number, SAT_CERTIFICATE_NUMBER
        ),
    );
    canvas.line(
        Font::Regular,
        7.0,
        &format!(
            "Fecha y hora de certificación: {}    RFC del proveedor de certificación: {}",
            stamp.stamped_at.format("%Y-%m-%dT%H:%M:%S"),
            stamp.pac
        ),
    );
    canvas.down(6.0);
    canvas.line(
        Font::Bold,
        8.0,
        "Este documento es una representación impresa de un CFDI (sandbox: sin validez fiscal).",
    );
}
