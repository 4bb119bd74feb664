//! The printed representation of a stored CFDI, rendered from its parsed XML for
//! invoices the SAT gave no PDF for. Amounts are printed exactly as the XML writes
//! them (decimal text, no rounding); codes are printed as codes (no catalog lookups),
//! so the page says what the document says.

use chrono::NaiveDateTime;

use super::{verification, Canvas, Font, Info, LEFT, RIGHT};
use crate::cfdi::{Cfdi, Decimal, InvoiceType, Item, Payment, TaxKind};

/// Side of the verification QR code, in points (about 3.5 cm).
const QR_SIDE: f32 = 100.0;

/// The PDF of `cfdi`: the same document always gives the same bytes.
pub fn render(cfdi: &Cfdi) -> Vec<u8> {
    let mut canvas = Canvas::default();
    header(&mut canvas, cfdi);
    parties(&mut canvas, cfdi);
    if !cfdi.items.is_empty() {
        items(&mut canvas, &cfdi.items);
    }
    if !cfdi.payments.is_empty() {
        payments(&mut canvas, &cfdi.payments);
    }
    totals(&mut canvas, cfdi);
    stamp(&mut canvas, cfdi);
    let uuid = cfdi.uuid().unwrap_or("sin timbre");
    let title = format!("CFDI {uuid}");
    canvas.finish(&Info {
        title: &title,
        producer: "cfdi-extract",
        created: NaiveDateTime::parse_from_str(&cfdi.issued_at, "%Y-%m-%dT%H:%M:%S").ok(),
    })
}

fn title(kind: InvoiceType) -> &'static str {
    match kind {
        InvoiceType::I => "FACTURA",
        InvoiceType::E => "NOTA DE CRÉDITO",
        InvoiceType::N => "RECIBO DE NÓMINA",
        InvoiceType::T => "TRASLADO",
        InvoiceType::P => "COMPLEMENTO DE PAGO",
    }
}

fn or_dash(value: Option<&str>) -> &str {
    value.filter(|v| !v.is_empty()).unwrap_or("-")
}

fn money(value: Option<Decimal>) -> String {
    value.map_or_else(|| "-".to_owned(), |d| d.to_string())
}

fn header(canvas: &mut Canvas, cfdi: &Cfdi) {
    canvas.text(Font::Bold, 16.0, LEFT, title(cfdi.invoice_type));
    let number = format!(
        "Serie {}  Folio {}",
        or_dash(cfdi.series.as_deref()),
        or_dash(cfdi.folio.as_deref())
    );
    canvas.text_right(Font::Bold, 10.0, RIGHT, &number);
    canvas.down(24.0);
    let uuid = cfdi.uuid().unwrap_or("sin timbre fiscal");
    canvas.line(Font::Regular, 9.0, &format!("Folio fiscal (UUID): {uuid}"));
    canvas.line(
        Font::Regular,
        9.0,
        &format!(
            "Fecha de emisión: {}    Versión CFDI: {}    Tipo de comprobante: {}",
            cfdi.issued_at, cfdi.version, cfdi.invoice_type
        ),
    );
    let mut terms = format!("Moneda: {}", or_dash(cfdi.currency.as_deref()));
    if let Some(rate) = cfdi.exchange_rate {
        terms.push_str(&format!("    Tipo de cambio: {rate}"));
    }
    terms.push_str(&format!(
        "    Método de pago: {}    Forma de pago: {}",
        or_dash(cfdi.payment_method.as_deref()),
        or_dash(cfdi.payment_form.as_deref())
    ));
    canvas.line(Font::Regular, 9.0, &terms);
    canvas.down(4.0);
    canvas.rule();
}

fn parties(canvas: &mut Canvas, cfdi: &Cfdi) {
    for (label, party, extra) in [
        (
            "Emisor",
            &cfdi.issuer,
            format!("Régimen fiscal: {}", or_dash(cfdi.issuer.regime.as_deref())),
        ),
        (
            "Receptor",
            &cfdi.receiver,
            format!("Uso CFDI: {}", or_dash(cfdi.receiver.cfdi_use.as_deref())),
        ),
    ] {
        canvas.line(Font::Bold, 10.0, label);
        canvas.line(
            Font::Regular,
            9.0,
            &format!(
                "RFC: {}    Nombre: {}",
                party.tax_id,
                or_dash(party.name.as_deref())
            ),
        );
        canvas.line(Font::Regular, 9.0, &extra);
        canvas.down(4.0);
    }
    for related in &cfdi.related {
        canvas.line(
            Font::Regular,
            9.0,
            &format!(
                "CFDI relacionado (tipo de relación {}): {}",
                or_dash(related.relation_type.as_deref()),
                related.uuid
            ),
        );
    }
    canvas.rule();
}

/// Column left edges (text) and right edges (amounts) of the items table.
const COL_QTY: f32 = LEFT;
const COL_KEY: f32 = 95.0;
const COL_UNIT: f32 = 150.0;
const COL_DESCRIPTION: f32 = 190.0;
const COL_PRICE_RIGHT: f32 = 490.0;
/// Characters of a description per printed line (the rest wraps).
const DESCRIPTION_CHARS: usize = 48;

fn items(canvas: &mut Canvas, items: &[Item]) {
    canvas.room(14.0);
    canvas.items_header(
        [COL_QTY, COL_KEY, COL_UNIT, COL_DESCRIPTION],
        COL_PRICE_RIGHT,
    );
    for item in items {
        let chars: Vec<char> = item.description.chars().collect();
        let lines: Vec<String> = chars
            .chunks(DESCRIPTION_CHARS)
            .map(|c| c.iter().collect())
            .collect();
        canvas.room(12.0);
        canvas.text(Font::Regular, 8.0, COL_QTY, &item.quantity.to_string());
        canvas.text(
            Font::Regular,
            8.0,
            COL_KEY,
            or_dash(item.product_code.as_deref()),
        );
        canvas.text(Font::Regular, 8.0, COL_UNIT, or_dash(item.unit.as_deref()));
        let price = item.unit_price.to_string();
        canvas.text_right(Font::Regular, 8.0, COL_PRICE_RIGHT, &price);
        canvas.text_right(Font::Regular, 8.0, RIGHT, &item.amount.to_string());
        for (n, line) in lines.iter().enumerate() {
            if n > 0 {
                canvas.room(10.0);
            }
            canvas.text(Font::Regular, 8.0, COL_DESCRIPTION, line);
            canvas.down(10.0);
        }
        if lines.is_empty() {
            canvas.down(10.0);
        }
        if let Some(discount) = item.discount {
            canvas.room(10.0);
            canvas.text(Font::Regular, 7.0, COL_DESCRIPTION, "Descuento");
            canvas.text_right(Font::Regular, 7.0, RIGHT, &discount.to_string());
            canvas.down(10.0);
        }
        for tax in &item.taxes {
            let kind = match tax.kind {
                TaxKind::Transferred => "Traslado",
                TaxKind::Withheld => "Retención",
            };
            let line = format!(
                "{kind} {}  {} {}  Base {}",
                tax.tax,
                or_dash(tax.factor.as_deref()),
                money(tax.rate),
                money(tax.base)
            );
            canvas.room(10.0);
            canvas.text(Font::Regular, 7.0, COL_DESCRIPTION, &line);
            canvas.text_right(Font::Regular, 7.0, RIGHT, &money(tax.amount));
            canvas.down(10.0);
        }
        canvas.down(2.0);
    }
    canvas.rule();
}

fn payments(canvas: &mut Canvas, payments: &[Payment]) {
    for payment in payments {
        canvas.line(Font::Bold, 10.0, "Pago");
        let mut line = format!(
            "Fecha de pago: {}    Forma de pago: {}    Moneda: {}",
            payment.paid_at,
            or_dash(payment.payment_form.as_deref()),
            payment.currency
        );
        if let Some(rate) = payment.exchange_rate {
            line.push_str(&format!("    Tipo de cambio: {rate}"));
        }
        line.push_str(&format!("    Monto: {}", payment.amount));
        canvas.line(Font::Regular, 9.0, &line);
        canvas.line(Font::Bold, 8.0, "Documentos relacionados");
        for doc in &payment.related_documents {
            canvas.line(
                Font::Regular,
                8.0,
                &format!(
                    "{}  Serie {} Folio {}  Moneda {}  Parcialidad {}",
                    or_dash(doc.uuid.as_deref()),
                    or_dash(doc.series.as_deref()),
                    or_dash(doc.folio.as_deref()),
                    or_dash(doc.currency.as_deref()),
                    doc.installment
                        .map_or_else(|| "-".to_owned(), |n| n.to_string()),
                ),
            );
            canvas.line(
                Font::Regular,
                8.0,
                &format!(
                    "      Saldo anterior: {}    Importe pagado: {}    Saldo insoluto: {}",
                    money(doc.previous_balance),
                    money(doc.amount_paid),
                    money(doc.outstanding_balance)
                ),
            );
        }
        canvas.down(4.0);
    }
    canvas.rule();
}

fn totals(canvas: &mut Canvas, cfdi: &Cfdi) {
    let mut rows = vec![("Subtotal", Some(cfdi.subtotal))];
    rows.push(("Descuento", cfdi.discount));
    rows.push(("Impuestos trasladados", cfdi.taxes_transferred));
    rows.push(("Impuestos retenidos", cfdi.taxes_withheld));
    rows.push(("Total", Some(cfdi.total)));
    for (label, value) in rows {
        let Some(value) = value else { continue };
        let font = if label == "Total" {
            Font::Bold
        } else {
            Font::Regular
        };
        canvas.room(13.0);
        canvas.text(font, 9.0, 380.0, label);
        canvas.text_right(font, 9.0, RIGHT, &value.to_string());
        canvas.down(13.0);
    }
    canvas.down(8.0);
    canvas.rule();
}

/// The stamp's data beside the verification QR code, then the seals.
fn stamp(canvas: &mut Canvas, cfdi: &Cfdi) {
    let Some(stamp) = &cfdi.stamp else {
        canvas.line(Font::Bold, 9.0, "Documento sin timbre fiscal digital.");
        return;
    };
    canvas.room(QR_SIDE + 8.0);
    let top = canvas.y;
    if let Some(payload) = verification::payload(cfdi) {
        canvas.qr(LEFT, QR_SIDE, &payload);
    }
    let text_left = LEFT + QR_SIDE + 12.0;
    canvas.down(8.0);
    for line in [
        format!("Folio fiscal (UUID): {}", or_dash(stamp.uuid.as_deref())),
        format!(
            "Fecha y hora de certificación: {}",
            or_dash(stamp.certified_at.as_deref())
        ),
        format!(
            "RFC del proveedor de certificación: {}",
            or_dash(stamp.provider_tax_id.as_deref())
        ),
        format!(
            "No. de serie del certificado del emisor: {}",
            or_dash(cfdi.certificate_number.as_deref())
        ),
        format!(
            "No. de serie del certificado del SAT: {}",
            or_dash(stamp.sat_certificate_number.as_deref())
        ),
        format!("Versión del timbre: {}", or_dash(stamp.version.as_deref())),
    ] {
        canvas.text(Font::Regular, 8.0, text_left, &line);
        canvas.down(12.0);
    }
    canvas.y = canvas.y.min(top - QR_SIDE - 8.0);
    for (label, seal) in [
        ("Sello digital del CFDI", cfdi.seal.as_deref()),
        ("Sello digital del SAT", stamp.sat_seal.as_deref()),
    ] {
        if let Some(seal) = seal.filter(|s| !s.is_empty()) {
            canvas.line(Font::Bold, 7.0, label);
            canvas.wrapped(Font::Regular, 6.0, seal, 150);
            canvas.down(3.0);
        }
    }
    canvas.down(6.0);
    canvas.line(
        Font::Bold,
        8.0,
        "Este documento es una representación impresa de un CFDI.",
    );
}

#[cfg(test)]
mod tests;
