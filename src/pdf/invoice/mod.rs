//! The printed representation of a stored CFDI, rendered from its parsed XML for
//! invoices the SAT gave no PDF for, as Mexico prints one: amounts with `$` and
//! separators (exact: every digit the XML wrote, at least two decimals), dates day
//! first, each SAT code with its catalog's description (`03 - Transferencia
//! electrónica de fondos`; a code the catalog does not know as written), the total in
//! words, and a payroll receipt's Nómina. Every text is wrapped to its column with the
//! font's metrics ([`Font::fit`]).

use chrono::NaiveDateTime;

use super::text::{coded, money, or_dash, pesos};
use super::{verification, Canvas, Font, Info, LEFT, RIGHT};
use crate::catalogs::{Catalog, Edition};
use crate::cfdi::{
    Cfdi, Decimal, InvoiceType, Item, ItemTax, Payment, PaymentTotals, Payroll, PayrollLine,
    TaxKind, Version,
};
use crate::format::{self, date_time};

/// The PDF of `cfdi`: the same document always gives the same bytes.
pub fn render(cfdi: &Cfdi) -> Vec<u8> {
    let mut canvas = Canvas::default();
    let doc = Doc::of(cfdi);
    header(&mut canvas, &doc);
    parties(&mut canvas, &doc);
    if !cfdi.items.is_empty() {
        items(&mut canvas, &doc);
    }
    for payroll in &cfdi.payroll {
        self::payroll(&mut canvas, payroll);
    }
    if !cfdi.payments.is_empty() {
        payments(&mut canvas, &doc);
    }
    totals(&mut canvas, &doc);
    stamp(&mut canvas, cfdi);
    let uuid = cfdi.uuid().unwrap_or("sin timbre");
    let title = format!("CFDI {uuid}");
    canvas.finish(&Info {
        title: &title,
        producer: "cfdi-extract",
        created: NaiveDateTime::parse_from_str(&cfdi.issued_at, "%Y-%m-%dT%H:%M:%S").ok(),
    })
}

/// The document with the catalogs' edition its codes are read in.
struct Doc<'a> {
    cfdi: &'a Cfdi,
    edition: Edition,
}

impl<'a> Doc<'a> {
    fn of(cfdi: &'a Cfdi) -> Self {
        Doc {
            cfdi,
            edition: Edition::of(cfdi.version),
        }
    }

    fn coded(&self, catalog: Catalog, code: Option<&str>) -> String {
        coded(catalog, code, self.edition)
    }

    /// An amount in the document's currency.
    fn money(&self, value: Option<Decimal>) -> String {
        money(value, self.cfdi.currency.as_deref())
    }
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

fn header(canvas: &mut Canvas, doc: &Doc) {
    let cfdi = doc.cfdi;
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
    let kind = doc.coded(Catalog::TipoDeComprobante, Some(cfdi.invoice_type.as_str()));
    let mut place = format!(
        "Lugar de expedición (C.P.): {}",
        or_dash(cfdi.place_of_issue.as_deref())
    );
    if let Some(export) = &cfdi.export {
        let export = doc.coded(Catalog::Exportacion, Some(export));
        place.push_str(&format!("    Exportación: {export}"));
    }
    let mut currency = format!(
        "Moneda: {}",
        doc.coded(Catalog::Moneda, cfdi.currency.as_deref())
    );
    if let Some(rate) = cfdi.exchange_rate {
        currency.push_str(&format!("    Tipo de cambio: {}", format::number(rate)));
    }
    for line in [
        format!("Folio fiscal (UUID): {uuid}"),
        format!(
            "Fecha de emisión: {}    Versión CFDI: {}",
            date_time(&cfdi.issued_at),
            cfdi.version
        ),
        format!("Tipo de comprobante: {kind}"),
        place,
        currency,
        format!(
            "Método de pago: {}",
            doc.coded(Catalog::MetodoPago, cfdi.payment_method.as_deref())
        ),
        format!(
            "Forma de pago: {}",
            doc.coded(Catalog::FormaPago, cfdi.payment_form.as_deref())
        ),
    ] {
        canvas.line(Font::Regular, 9.0, &line);
    }
    canvas.down(4.0);
    canvas.rule();
}

fn parties(canvas: &mut Canvas, doc: &Doc) {
    let cfdi = doc.cfdi;
    let receiver = &cfdi.receiver;
    let regime = |code: Option<&str>| {
        format!(
            "Régimen fiscal: {}",
            doc.coded(Catalog::RegimenFiscal, code)
        )
    };
    let mut receiver_lines = vec![format!(
        "Uso CFDI: {}",
        doc.coded(Catalog::UsoCfdi, receiver.cfdi_use.as_deref())
    )];
    if let Some(code) = &receiver.regime {
        receiver_lines.push(regime(Some(code)));
    }
    if let Some(postal_code) = &receiver.postal_code {
        receiver_lines.push(format!("Domicilio fiscal (C.P.): {postal_code}"));
    }
    for (label, party, extra) in [
        (
            "Emisor",
            &cfdi.issuer,
            vec![regime(cfdi.issuer.regime.as_deref())],
        ),
        ("Receptor", receiver, receiver_lines),
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
        for line in extra {
            canvas.line(Font::Regular, 9.0, &line);
        }
        canvas.down(4.0);
    }
    for related in &cfdi.related {
        canvas.line(
            Font::Regular,
            9.0,
            &format!(
                "CFDI relacionado: {}    Tipo de relación: {}",
                related.uuid,
                doc.coded(Catalog::TipoRelacion, related.relation_type.as_deref())
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
const AMOUNT_ROOM: f32 = 76.0;
const ROW: f32 = 10.0;

fn tax_kind(kind: TaxKind) -> &'static str {
    match kind {
        TaxKind::Transferred => "Traslado",
        TaxKind::Withheld => "Retención",
    }
}

/// `Retención 001 - ISR` / `Traslado 002 - IVA Tasa 16%`: what a tax entry is. A rate
/// (Tasa) reads as a percentage; a Cuota is an amount per unit, written as is; CFDI
/// 3.2 names its tax (`IVA`) and writes its rate as a percentage already.
fn tax_label(doc: &Doc, tax: &ItemTax) -> String {
    let mut label = format!(
        "{} {}",
        tax_kind(tax.kind),
        doc.coded(Catalog::Impuesto, Some(&tax.tax))
    );
    if let Some(factor) = tax.factor.as_deref() {
        label.push(' ');
        label.push_str(factor);
    }
    if let Some(rate) = tax.rate {
        let rate = if doc.cfdi.version == Version::V32 {
            format!("{}%", format::number(rate))
        } else if tax.factor.as_deref() == Some("Cuota") {
            format::number(rate)
        } else {
            format::percent(rate)
        };
        label.push(' ');
        label.push_str(&rate);
    }
    label
}

/// The tax label with its base, when the entry states one; its amount is printed
/// beside it.
fn tax_line(doc: &Doc, tax: &ItemTax, currency: Option<&str>) -> String {
    match tax.base {
        Some(base) => format!(
            "{}  Base {}",
            tax_label(doc, tax),
            format::money(base, currency)
        ),
        None => tax_label(doc, tax),
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

/// The concepts: quantity, keys, description and amounts (in the document's currency,
/// stated once in the header), then under each description what its codes mean, its
/// discount and its taxes.
fn items(canvas: &mut Canvas, doc: &Doc) {
    canvas.room(14.0);
    canvas.items_header(
        [COL_QTY.0, COL_KEY.0, COL_UNIT.0, COL_DESCRIPTION.0],
        PRICE_RIGHT,
    );
    for item in &doc.cfdi.items {
        item_rows(canvas, doc, item);
    }
    canvas.rule();
}

fn item_rows(canvas: &mut Canvas, doc: &Doc, item: &Item) {
    let quantity = format::number(item.quantity);
    let price = pesos(Some(item.unit_price));
    let amount = pesos(Some(item.amount));
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
    // What the two keys mean, where the catalogs know them (3.2's free-text unit is
    // already words).
    let described = |catalog: Catalog, code: Option<&str>| {
        code.filter(|c| catalog.description(c, doc.edition).is_some())
            .map(|c| catalog.label(c, doc.edition))
    };
    if let Some(key) = described(Catalog::ClaveProdServ, item.product_code.as_deref()) {
        details.push((
            format!("Clave de producto o servicio: {key}"),
            String::new(),
        ));
    }
    if let Some(unit) = described(Catalog::ClaveUnidad, item.unit.as_deref()) {
        details.push((format!("Unidad: {unit}"), String::new()));
    }
    if let Some(object) = &item.tax_object {
        let object = doc.coded(Catalog::ObjetoImp, Some(object));
        details.push((format!("Objeto de impuesto: {object}"), String::new()));
    }
    if let Some(discount) = item.discount {
        details.push(("Descuento".to_owned(), pesos(Some(discount))));
    }
    for tax in &item.taxes {
        details.push((tax_line(doc, tax, None), pesos(tax.amount)));
    }
    for (label, amount) in &details {
        row(canvas, 7.0, &[(COL_DESCRIPTION, label)], &[(RIGHT, amount)]);
    }
    canvas.down(2.0);
}

/// Tax entries as indented lines, each with its amount in `currency`.
fn tax_lines(
    canvas: &mut Canvas,
    doc: &Doc,
    size: f32,
    indent: f32,
    taxes: &[ItemTax],
    currency: Option<&str>,
) {
    for tax in taxes {
        let line = format!(
            "{}    Importe: {}",
            tax_line(doc, tax, currency),
            money(tax.amount, currency)
        );
        canvas.paragraph(Font::Regular, size, LEFT + indent, &line);
    }
}

fn payments(canvas: &mut Canvas, doc: &Doc) {
    for payment in &doc.cfdi.payments {
        payment_block(canvas, doc, payment);
    }
    if let Some(totals) = &doc.cfdi.payment_totals {
        payment_totals(canvas, totals);
    }
    canvas.rule();
}

/// One Pago: when, how and how much (also in words), its taxes, and the documents it
/// pays with their balances in their own currency.
fn payment_block(canvas: &mut Canvas, doc: &Doc, payment: &Payment) {
    let currency = Some(payment.currency.as_str());
    canvas.line(Font::Bold, 10.0, "Pago");
    canvas.line(
        Font::Regular,
        9.0,
        &format!(
            "Fecha de pago: {}    Forma de pago: {}",
            date_time(&payment.paid_at),
            doc.coded(Catalog::FormaPago, payment.payment_form.as_deref())
        ),
    );
    let mut line = format!("Moneda: {}", doc.coded(Catalog::Moneda, currency));
    if let Some(rate) = payment.exchange_rate {
        line.push_str(&format!("    Tipo de cambio: {}", format::number(rate)));
    }
    line.push_str(&format!(
        "    Monto: {}",
        format::money(payment.amount, currency)
    ));
    canvas.line(Font::Regular, 9.0, &line);
    canvas.in_words("Monto con letra", payment.amount, currency);
    if !payment.taxes.is_empty() {
        canvas.line(Font::Bold, 8.0, "Impuestos del pago");
        tax_lines(canvas, doc, 8.0, 12.0, &payment.taxes, currency);
    }
    canvas.line(Font::Bold, 8.0, "Documentos relacionados");
    for related in &payment.related_documents {
        let doc_currency = related.currency.as_deref();
        let mut line = format!(
            "{}  Serie {} Folio {}  Moneda {}",
            or_dash(related.uuid.as_deref()),
            or_dash(related.series.as_deref()),
            or_dash(related.folio.as_deref()),
            or_dash(doc_currency),
        );
        if let Some(equivalence) = related.equivalence {
            line.push_str(&format!("  Equivalencia {}", format::number(equivalence)));
        }
        line.push_str(&format!(
            "  Parcialidad {}",
            related
                .installment
                .map_or_else(|| "-".to_owned(), |n| n.to_string())
        ));
        canvas.line(Font::Regular, 8.0, &line);
        if let Some(method) = &related.payment_method {
            let method = doc.coded(Catalog::MetodoPago, Some(method));
            canvas.paragraph(
                Font::Regular,
                8.0,
                LEFT + 12.0,
                &format!("Método de pago: {method}"),
            );
        }
        canvas.paragraph(
            Font::Regular,
            8.0,
            LEFT + 12.0,
            &format!(
                "Saldo anterior: {}    Importe pagado: {}    Saldo insoluto: {}",
                money(related.previous_balance, doc_currency),
                money(related.amount_paid, doc_currency),
                money(related.outstanding_balance, doc_currency)
            ),
        );
        tax_lines(canvas, doc, 7.0, 24.0, &related.taxes, doc_currency);
    }
    canvas.down(4.0);
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
        if value.is_some() {
            canvas.amount_row(Font::Regular, TOTALS_X, label, &pesos(value));
        }
    }
    canvas.down(4.0);
}

/// A Nómina complement: the period, the employee, then each perception, deduction
/// and other payment with its type's description and amount (in pesos: payroll is
/// paid in MXN), then their totals.
fn payroll(canvas: &mut Canvas, p: &Payroll) {
    // Nómina's catalogs have one edition; the argument is not read for them.
    let coded =
        |catalog: Catalog, code: &Option<String>| coded(catalog, code.as_deref(), Edition::Cfdi40);
    let day = |d: &Option<String>| d.as_deref().map_or_else(|| "-".to_owned(), date_time);
    let e = &p.employee;
    canvas.line(Font::Bold, 10.0, "Nómina");
    let mut lines = vec![
        format!(
            "Tipo de nómina: {}    Fecha de pago: {}",
            coded(Catalog::TipoNomina, &p.payroll_type),
            day(&p.paid_on)
        ),
        format!(
            "Periodo: {} al {}    Días pagados: {}",
            day(&p.period_from),
            day(&p.period_to),
            p.days_paid.map_or_else(|| "-".to_owned(), format::number)
        ),
        format!(
            "Registro patronal: {}",
            or_dash(p.employer_registration.as_deref())
        ),
        format!(
            "CURP: {}    Núm. de seguridad social: {}    Núm. de empleado: {}",
            or_dash(e.curp.as_deref()),
            or_dash(e.social_security_number.as_deref()),
            or_dash(e.employee_number.as_deref())
        ),
        format!(
            "Inicio de la relación laboral: {}    Antigüedad: {}    Sindicalizado: {}",
            day(&e.started_on),
            or_dash(e.seniority.as_deref()),
            or_dash(e.unionized.as_deref())
        ),
        format!(
            "Tipo de contrato: {}",
            coded(Catalog::TipoContrato, &e.contract_type)
        ),
        format!(
            "Tipo de jornada: {}",
            coded(Catalog::TipoJornada, &e.workday_type)
        ),
        format!(
            "Tipo de régimen: {}",
            coded(Catalog::TipoRegimen, &e.regime_type)
        ),
        format!(
            "Departamento: {}    Puesto: {}    Riesgo de puesto: {}",
            or_dash(e.department.as_deref()),
            or_dash(e.position.as_deref()),
            coded(Catalog::RiesgoPuesto, &e.job_risk)
        ),
        format!(
            "Periodicidad de pago: {}    Entidad federativa: {}",
            coded(Catalog::PeriodicidadPago, &e.payment_frequency),
            coded(Catalog::Estado, &e.state)
        ),
        format!(
            "Salario base de cotización: {}    Salario diario integrado: {}",
            pesos(e.base_salary),
            pesos(e.integrated_daily_salary)
        ),
    ];
    if e.bank.is_some() || e.account.is_some() {
        lines.push(format!(
            "Banco: {}    Cuenta: {}",
            coded(Catalog::Banco, &e.bank),
            or_dash(e.account.as_deref())
        ));
    }
    for line in lines {
        canvas.line(Font::Regular, 9.0, &line);
    }
    for (title, catalog, rows, total_label, total) in [
        (
            "Percepciones",
            Catalog::TipoPercepcion,
            &p.perceptions,
            "Total percepciones",
            p.total_perceptions,
        ),
        (
            "Deducciones",
            Catalog::TipoDeduccion,
            &p.deductions,
            "Total deducciones",
            p.total_deductions,
        ),
        (
            "Otros pagos",
            Catalog::TipoOtroPago,
            &p.other_payments,
            "Total otros pagos",
            p.total_other_payments,
        ),
    ] {
        if rows.is_empty() && total.is_none() {
            continue;
        }
        canvas.down(2.0);
        canvas.line(Font::Bold, 9.0, title);
        for line in rows {
            payroll_line(canvas, line, coded(catalog, &line.kind));
        }
        canvas.amount_row(Font::Bold, LEFT + 12.0, total_label, &pesos(total));
    }
    canvas.down(4.0);
    canvas.rule();
}

/// `001 - Sueldos, Salarios Rayas y Jornales: Sueldo (clave 001)` beside its amount; a
/// perception's taxed and exempt parts after its concept.
fn payroll_line(canvas: &mut Canvas, line: &PayrollLine, kind: String) {
    let mut label = format!(
        "{kind}: {} (clave {})",
        or_dash(line.concept.as_deref()),
        or_dash(line.key.as_deref())
    );
    let amount = if line.taxed.is_some() || line.exempt.is_some() {
        label.push_str(&format!(
            "    Gravado {}    Exento {}",
            pesos(line.taxed),
            pesos(line.exempt)
        ));
        Some(line.taxed.unwrap_or_default() + line.exempt.unwrap_or_default())
    } else {
        line.amount
    };
    canvas.amount_row(Font::Regular, LEFT + 12.0, &label, &pesos(amount));
}

/// Where the labels beside the totals' amounts start.
const TOTALS_X: f32 = 320.0;

/// Subtotal, discount, each of the document's taxes on its own line beside its
/// total (withholdings by tax: ISR and IVA apart), then the total and the total in
/// words (not for a payment complement's `XXX`, no currency: each payment has its own).
fn totals(canvas: &mut Canvas, doc: &Doc) {
    let cfdi = doc.cfdi;
    let mut rows: Vec<(Font, String, String)> = Vec::new();
    let mut push = |label: String, value: Option<Decimal>| {
        if value.is_some() {
            rows.push((Font::Regular, label, doc.money(value)));
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
        for tax in cfdi.tax_breakdown.iter().filter(|t| t.kind == kind) {
            push(tax_label(doc, tax), tax.amount);
        }
        push(total_label.to_owned(), total);
    }
    rows.push((Font::Bold, "Total".to_owned(), doc.money(Some(cfdi.total))));
    for (font, label, amount) in rows {
        canvas.amount_row(font, TOTALS_X, &label, &amount);
    }
    let currency = cfdi.currency.as_deref();
    if !currency.is_some_and(|c| c.trim().eq_ignore_ascii_case("XXX")) {
        canvas.down(4.0);
        canvas.in_words("Importe con letra", cfdi.total, currency);
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
