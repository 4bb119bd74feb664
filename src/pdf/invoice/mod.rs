//! The printed representation of a stored CFDI, rendered from its parsed XML for
//! invoices the SAT gave no PDF for. Amounts are printed exactly as the XML writes
//! them (decimal text, no rounding); codes are printed as codes (no catalog lookups,
//! but for the three tax codes' names), so the page says what the document says.
//! Every text is wrapped to its column with the font's metrics ([`Font::fit`]).

use chrono::NaiveDateTime;

use super::{verification, Canvas, Font, Info, LEFT, RIGHT};
use crate::cfdi::{Cfdi, Decimal, InvoiceType, Item, ItemTax, Payment, PaymentTotals, TaxKind};

/// The PDF of `cfdi`: the same document always gives the same bytes.
pub fn render(cfdi: &Cfdi) -> Vec<u8> {
    let mut canvas = Canvas::default();
    header(&mut canvas, cfdi);
    parties(&mut canvas, cfdi);
    if !cfdi.items.is_empty() {
        items(&mut canvas, &cfdi.items);
    }
    if !cfdi.payments.is_empty() {
        payments(&mut canvas, &cfdi.payments, cfdi.payment_totals.as_ref());
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
    let title = title(cfdi.invoice_type);
    canvas.text(Font::Bold, 16.0, LEFT, title);
    let number = format!(
        "Serie {}  Folio {}",
        or_dash(cfdi.series.as_deref()),
        or_dash(cfdi.folio.as_deref())
    );
    // Beside the title when it fits there (a gap of 12 points), else below it.
    let title_end = LEFT + Font::Bold.width(16.0, title) + 12.0;
    if RIGHT - Font::Bold.width(10.0, &number) >= title_end {
        canvas.text_right(Font::Bold, 10.0, RIGHT, &number);
        canvas.down(24.0);
    } else {
        canvas.down(20.0);
        canvas.line(Font::Bold, 10.0, &number);
        canvas.down(4.0);
    }
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
    let mut place = format!(
        "Lugar de expedición: {}",
        or_dash(cfdi.place_of_issue.as_deref())
    );
    if let Some(export) = &cfdi.export {
        place.push_str(&format!("    Exportación: {export}"));
    }
    canvas.line(Font::Regular, 9.0, &place);
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
    let receiver = &cfdi.receiver;
    let mut receiver_extra = format!("Uso CFDI: {}", or_dash(receiver.cfdi_use.as_deref()));
    if let Some(regime) = &receiver.regime {
        receiver_extra.push_str(&format!("    Régimen fiscal: {regime}"));
    }
    if let Some(postal_code) = &receiver.postal_code {
        receiver_extra.push_str(&format!("    Domicilio fiscal (C.P.): {postal_code}"));
    }
    for (label, party, extra) in [
        (
            "Emisor",
            &cfdi.issuer,
            format!("Régimen fiscal: {}", or_dash(cfdi.issuer.regime.as_deref())),
        ),
        ("Receptor", receiver, receiver_extra),
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

/// The items table's text columns: left edge and width. Amounts are right-aligned
/// at `PRICE_RIGHT` (unit value) and `RIGHT` (amount), and the description ends
/// `AMOUNT_ROOM` before the unit value's right edge.
const COL_QTY: (f32, f32) = (LEFT, 48.0);
const COL_KEY: (f32, f32) = (92.0, 44.0);
const COL_UNIT: (f32, f32) = (140.0, 56.0);
const COL_DESCRIPTION: (f32, f32) = (200.0, PRICE_RIGHT - AMOUNT_ROOM - 200.0);
const PRICE_RIGHT: f32 = 490.0;
const AMOUNT_ROOM: f32 = 66.0;
const ROW: f32 = 10.0;

/// Label for a tax code: the SAT's catalog code with its name (`002 IVA`); a 3.2
/// document already names the tax.
fn tax_name(code: &str) -> String {
    match code {
        "001" => "001 ISR".to_owned(),
        "002" => "002 IVA".to_owned(),
        "003" => "003 IEPS".to_owned(),
        other => other.to_owned(),
    }
}

fn tax_kind(kind: TaxKind) -> &'static str {
    match kind {
        TaxKind::Transferred => "Traslado",
        TaxKind::Withheld => "Retención",
    }
}

/// `Retención 001 ISR` / `Traslado 002 IVA Tasa 0.160000`: what a tax entry is.
fn tax_label(tax: &ItemTax) -> String {
    let mut label = format!("{} {}", tax_kind(tax.kind), tax_name(&tax.tax));
    let rate = tax.rate.map(|r| r.to_string());
    for part in [tax.factor.as_deref(), rate.as_deref()]
        .into_iter()
        .flatten()
    {
        label.push(' ');
        label.push_str(part);
    }
    label
}

/// The tax label with its base, when the entry states one; its amount is printed
/// beside it.
fn tax_line(tax: &ItemTax) -> String {
    match tax.base {
        Some(base) => format!("{}  Base {base}", tax_label(tax)),
        None => tax_label(tax),
    }
}

/// One table row: each text cell wrapped to its column, amounts right-aligned on the
/// first line; then down by the tallest cell.
fn row(canvas: &mut Canvas, size: f32, cells: &[((f32, f32), &str)], amounts: &[(f32, &str)]) {
    let wrapped: Vec<(f32, Vec<String>)> = cells
        .iter()
        .map(|((x, width), text)| (*x, Font::Regular.fit(size, text, *width)))
        .collect();
    let height = wrapped
        .iter()
        .map(|(_, lines)| lines.len())
        .max()
        .unwrap_or(1);
    canvas.room(ROW);
    for (right, amount) in amounts {
        canvas.text_right(Font::Regular, size, *right, amount);
    }
    for n in 0..height {
        if n > 0 {
            canvas.room(ROW);
        }
        for (x, lines) in &wrapped {
            if let Some(line) = lines.get(n) {
                canvas.text(Font::Regular, size, *x, line);
            }
        }
        canvas.down(ROW);
    }
}

fn items(canvas: &mut Canvas, items: &[Item]) {
    canvas.room(14.0);
    canvas.items_header(
        [COL_QTY.0, COL_KEY.0, COL_UNIT.0, COL_DESCRIPTION.0],
        PRICE_RIGHT,
    );
    for item in items {
        let quantity = item.quantity.to_string();
        let price = item.unit_price.to_string();
        let amount = item.amount.to_string();
        row(
            canvas,
            8.0,
            &[
                (COL_QTY, &quantity),
                (COL_KEY, or_dash(item.product_code.as_deref())),
                (COL_UNIT, or_dash(item.unit.as_deref())),
                (COL_DESCRIPTION, &item.description),
            ],
            &[(PRICE_RIGHT, &price), (RIGHT, &amount)],
        );
        let mut details: Vec<(String, String)> = Vec::new();
        if let Some(object) = &item.tax_object {
            details.push((format!("Objeto de impuesto: {object}"), String::new()));
        }
        if let Some(discount) = item.discount {
            details.push(("Descuento".to_owned(), discount.to_string()));
        }
        for tax in &item.taxes {
            details.push((tax_line(tax), money(tax.amount)));
        }
        for (label, amount) in &details {
            row(canvas, 7.0, &[(COL_DESCRIPTION, label)], &[(RIGHT, amount)]);
        }
        canvas.down(2.0);
    }
    canvas.rule();
}

/// Tax entries as indented lines, each with its amount.
fn tax_lines(canvas: &mut Canvas, size: f32, indent: f32, taxes: &[ItemTax]) {
    for tax in taxes {
        let line = format!("{}    Importe: {}", tax_line(tax), money(tax.amount));
        canvas.paragraph(Font::Regular, size, LEFT + indent, &line);
    }
}

fn payments(canvas: &mut Canvas, payments: &[Payment], totals: Option<&PaymentTotals>) {
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
        if !payment.taxes.is_empty() {
            canvas.line(Font::Bold, 8.0, "Impuestos del pago");
            tax_lines(canvas, 8.0, 12.0, &payment.taxes);
        }
        canvas.line(Font::Bold, 8.0, "Documentos relacionados");
        for doc in &payment.related_documents {
            let mut line = format!(
                "{}  Serie {} Folio {}  Moneda {}",
                or_dash(doc.uuid.as_deref()),
                or_dash(doc.series.as_deref()),
                or_dash(doc.folio.as_deref()),
                or_dash(doc.currency.as_deref()),
            );
            if let Some(equivalence) = doc.equivalence {
                line.push_str(&format!("  Equivalencia {equivalence}"));
            }
            line.push_str(&format!(
                "  Parcialidad {}",
                doc.installment
                    .map_or_else(|| "-".to_owned(), |n| n.to_string())
            ));
            canvas.line(Font::Regular, 8.0, &line);
            canvas.paragraph(
                Font::Regular,
                8.0,
                LEFT + 12.0,
                &format!(
                    "Saldo anterior: {}    Importe pagado: {}    Saldo insoluto: {}",
                    money(doc.previous_balance),
                    money(doc.amount_paid),
                    money(doc.outstanding_balance)
                ),
            );
            tax_lines(canvas, 7.0, 24.0, &doc.taxes);
        }
        canvas.down(4.0);
    }
    if let Some(totals) = totals {
        payment_totals(canvas, totals);
    }
    canvas.rule();
}

/// The Pagos 2.0 Totales, one row per amount the node has.
fn payment_totals(canvas: &mut Canvas, totals: &PaymentTotals) {
    canvas.line(Font::Bold, 9.0, "Totales del complemento de pago (MXN)");
    let rows = [
        ("Total retenciones IVA", totals.withheld_iva),
        ("Total retenciones ISR", totals.withheld_isr),
        ("Total retenciones IEPS", totals.withheld_ieps),
        ("Total traslados base IVA 16%", totals.base_iva16),
        ("Total traslados impuesto IVA 16%", totals.iva16),
        ("Total traslados base IVA 8%", totals.base_iva8),
        ("Total traslados impuesto IVA 8%", totals.iva8),
        ("Total traslados base IVA 0%", totals.base_iva0),
        ("Total traslados impuesto IVA 0%", totals.iva0),
        ("Total traslados base IVA exento", totals.base_iva_exempt),
        ("Monto total de pagos", totals.total_paid),
    ];
    for (label, value) in rows {
        if let Some(value) = value {
            amount_row(canvas, Font::Regular, label, &value.to_string());
        }
    }
    canvas.down(4.0);
}

/// Left edge and width of the labels beside the totals' amounts.
const TOTALS_LABEL: (f32, f32) = (320.0, RIGHT - 70.0 - 320.0);

/// A label (wrapped to its column) and an amount ending at the right margin.
fn amount_row(canvas: &mut Canvas, font: Font, label: &str, amount: &str) {
    let lines = font.fit(9.0, label, TOTALS_LABEL.1);
    canvas.room(13.0 * lines.len() as f32);
    canvas.text_right(font, 9.0, RIGHT, amount);
    for line in lines {
        canvas.text(font, 9.0, TOTALS_LABEL.0, &line);
        canvas.down(13.0);
    }
}

/// Subtotal, discount, each of the document's taxes on its own line beside its
/// total (withholdings by tax: ISR and IVA apart), then the total.
fn totals(canvas: &mut Canvas, cfdi: &Cfdi) {
    let mut rows: Vec<(Font, String, String)> = Vec::new();
    let mut push = |label: String, value: Option<Decimal>| {
        if let Some(value) = value {
            rows.push((Font::Regular, label, value.to_string()));
        }
    };
    push("Subtotal".to_owned(), Some(cfdi.subtotal));
    push("Descuento".to_owned(), cfdi.discount);
    for (kind, total_label, total) in [
        (
            TaxKind::Transferred,
            "Total impuestos trasladados",
            cfdi.taxes_transferred,
        ),
        (
            TaxKind::Withheld,
            "Total impuestos retenidos",
            cfdi.taxes_withheld,
        ),
    ] {
        let entries: Vec<&ItemTax> = cfdi
            .tax_breakdown
            .iter()
            .filter(|t| t.kind == kind)
            .collect();
        for tax in &entries {
            push(tax_label(tax), tax.amount);
        }
        push(total_label.to_owned(), total);
    }
    rows.push((Font::Bold, "Total".to_owned(), cfdi.total.to_string()));
    for (font, label, amount) in rows {
        amount_row(canvas, font, &label, &amount);
    }
    canvas.down(8.0);
    canvas.rule();
}

/// The stamp's block (`super::stamp`) with the invoice's seal and verification QR.
fn stamp(canvas: &mut Canvas, cfdi: &Cfdi) {
    super::stamp::block(
        canvas,
        &super::stamp::Stamped {
            stamp: cfdi.stamp.as_ref(),
            seal: cfdi.seal.as_deref(),
            certificate_number: cfdi.certificate_number.as_deref(),
            verification: verification::payload(cfdi),
            closing: "Este documento es una representación impresa de un CFDI.",
        },
    );
}

#[cfg(test)]
mod tests;
