//! The printed representation of a CFDI de Retenciones, rendered from its parsed XML
//! (the SAT gives no PDF of one in its downloads). Like the invoice's: amounts with `$`
//! and separators (a retention's are in pesos), dates day first, each code with its
//! catalog's description, the totals in words, every text wrapped to its column; it
//! ends with the stamp's block and the QR code of the SAT's retenciones verification
//! site.

use chrono::NaiveDateTime;

use super::text::{coded, or_dash, pesos};
use super::{stamp, verification, Canvas, Font, Info, LEFT};
use crate::catalogs::{Catalog, Edition};
use crate::format::date_time;
use crate::retention::{Complement, Period, Retention, Version};

/// The PDF of `r`: the same document always gives the same bytes.
pub fn render(r: &Retention) -> Vec<u8> {
    let mut canvas = Canvas::default();
    header(&mut canvas, r);
    parties(&mut canvas, r);
    totals(&mut canvas, r);
    if !r.complements.is_empty() {
        complements(&mut canvas, &r.complements);
    }
    stamp::block(
        &mut canvas,
        &stamp::Stamped {
            stamp: r.stamp.as_ref(),
            seal: r.seal.as_deref(),
            certificate_number: r.certificate_number.as_deref(),
            verification: verification::retention_payload(r),
            closing: "Este documento es una representación impresa de un CFDI de Retenciones e Información de Pagos.",
        },
    );
    let uuid = r.uuid().unwrap_or("sin timbre");
    let title = format!("CFDI de Retenciones {uuid}");
    let issued = r.issued_at.as_deref().unwrap_or("");
    canvas.finish(&Info {
        title: &title,
        producer: "cfdi-extract",
        created: NaiveDateTime::parse_from_str(issued.get(..19).unwrap_or(""), "%Y-%m-%dT%H:%M:%S")
            .ok(),
    })
}

/// The CFDI catalogs' edition a retention's codes are read in: RET 2.0 came with CFDI
/// 4.0.
fn edition(r: &Retention) -> Edition {
    match r.version {
        Version::V10 => Edition::Cfdi33,
        Version::V20 => Edition::Cfdi40,
    }
}

/// A withheld tax as written, with its name: RET 2.0's `002` from c_Impuesto, RET
/// 1.0's `02` from Retenciones' c_TipoImpuesto.
fn tax_label(code: Option<&str>, edition: Edition) -> String {
    match code {
        Some(c) if Catalog::Impuesto.entry(c, edition).is_some() => {
            Catalog::Impuesto.label(c, edition)
        }
        other => coded(Catalog::TipoImpuesto, other, edition),
    }
}

/// `Enero a Diciembre de 2025`, `Junio de 2025`: months by their c_Periodo names (a
/// month outside it as its number).
fn period(p: Period) -> String {
    let month = |m: u32| {
        let code = format!("{m:02}");
        Catalog::Periodo
            .description(&code, Edition::Cfdi40)
            .map_or(code, str::to_owned)
    };
    if p.start_month == p.end_month {
        format!("{} de {}", month(p.start_month), p.year)
    } else {
        format!(
            "{} a {} de {}",
            month(p.start_month),
            month(p.end_month),
            p.year
        )
    }
}

fn header(canvas: &mut Canvas, r: &Retention) {
    let edition = edition(r);
    canvas.paragraph(
        Font::Bold,
        14.0,
        LEFT,
        "CONSTANCIA DE RETENCIONES E INFORMACIÓN DE PAGOS",
    );
    canvas.down(4.0);
    let uuid = r.uuid().unwrap_or("sin timbre fiscal");
    canvas.line(Font::Regular, 9.0, &format!("Folio fiscal (UUID): {uuid}"));
    canvas.line(
        Font::Regular,
        9.0,
        &format!(
            "Folio interno: {}    Fecha de expedición: {}    Versión: {}",
            or_dash(r.internal_folio.as_deref()),
            r.issued_at
                .as_deref()
                .map_or_else(|| "-".to_owned(), date_time),
            r.version.as_str()
        ),
    );
    canvas.line(
        Font::Regular,
        9.0,
        &format!(
            "Clave de retención: {}",
            coded(Catalog::CveRetenc, r.key.as_deref(), edition)
        ),
    );
    if let Some(description) = r.key_description.as_deref().filter(|d| !d.is_empty()) {
        canvas.line(
            Font::Regular,
            9.0,
            &format!("Descripción de la retención: {description}"),
        );
    }
    if let Some(place) = &r.place_of_issue {
        canvas.line(
            Font::Regular,
            9.0,
            &format!("Lugar de expedición (C.P.): {place}"),
        );
    }
    if let Some(p) = r.period {
        canvas.line(Font::Regular, 9.0, &format!("Periodo: {}", period(p)));
    }
    canvas.down(4.0);
    canvas.rule();
}

fn parties(canvas: &mut Canvas, r: &Retention) {
    let edition = edition(r);
    canvas.line(Font::Bold, 10.0, "Emisor");
    let mut issuer = format!(
        "RFC: {}    Nombre: {}",
        r.issuer.tax_id,
        or_dash(r.issuer.name.as_deref())
    );
    if let Some(curp) = &r.issuer.curp {
        issuer.push_str(&format!("    CURP: {curp}"));
    }
    canvas.paragraph(Font::Regular, 9.0, LEFT, &issuer);
    if let Some(regime) = &r.issuer.regime {
        let regime = coded(Catalog::RegimenFiscal, Some(regime), edition);
        canvas.line(Font::Regular, 9.0, &format!("Régimen fiscal: {regime}"));
    }
    canvas.down(4.0);
    canvas.line(Font::Bold, 10.0, "Receptor");
    let receiver = match &r.receiver {
        None => "Sin receptor".to_owned(),
        Some(x) => {
            let mut line = format!("Nacionalidad: {}", or_dash(x.nationality.as_deref()));
            if let Some(n) = &x.national {
                line.push_str(&format!(
                    "    RFC: {}    Nombre: {}",
                    n.tax_id,
                    or_dash(n.name.as_deref())
                ));
                if let Some(curp) = &n.curp {
                    line.push_str(&format!("    CURP: {curp}"));
                }
                if let Some(cp) = &n.postal_code {
                    line.push_str(&format!("    Domicilio fiscal (C.P.): {cp}"));
                }
            }
            if let Some(f) = &x.foreign {
                line.push_str(&format!(
                    "    Registro de identificación fiscal: {}    Nombre: {}",
                    or_dash(f.tax_id.as_deref()),
                    or_dash(f.name.as_deref())
                ));
            }
            line
        }
    };
    canvas.paragraph(Font::Regular, 9.0, LEFT, &receiver);
    for related in &r.related {
        canvas.paragraph(
            Font::Regular,
            9.0,
            LEFT,
            &format!(
                "CFDI de retención relacionado: {}    Tipo de relación: {}",
                related.uuid,
                coded(
                    Catalog::TipoRelacion,
                    related.relation_type.as_deref(),
                    edition
                )
            ),
        );
    }
    canvas.down(4.0);
    canvas.rule();
}

/// Each withheld tax with its base and type of payment (RET 2.0's code with its
/// description, RET 1.0's text as written), the totals, and the operation's total and
/// the total withheld in words.
fn totals(canvas: &mut Canvas, r: &Retention) {
    let edition = edition(r);
    canvas.line(Font::Bold, 10.0, "Impuestos retenidos");
    for t in &r.withheld_taxes {
        let label = format!(
            "{}    Base: {}    Tipo de pago: {}",
            tax_label(t.tax.as_deref(), edition),
            pesos(t.base),
            coded(Catalog::TipoPagoRet, t.payment_type.as_deref(), edition)
        );
        canvas.amount_row(Font::Regular, LEFT, &label, &pesos(Some(t.amount)));
    }
    if r.withheld_taxes.is_empty() {
        canvas.line(Font::Regular, 9.0, "Sin impuestos retenidos");
    }
    canvas.down(4.0);
    let totals = &r.totals;
    let mut rows = vec![
        ("Monto total de la operación", Some(totals.operation)),
        ("Monto total gravado", totals.taxed),
        ("Monto total exento", totals.exempt),
    ];
    if totals.bimonthly_profit.is_some() {
        rows.push(("Utilidad bimestral", totals.bimonthly_profit));
    }
    if totals.isr_due.is_some() {
        rows.push(("ISR correspondiente", totals.isr_due));
    }
    for (label, amount) in rows {
        canvas.amount_row(Font::Regular, LEFT, label, &pesos(amount));
    }
    canvas.amount_row(
        Font::Bold,
        LEFT,
        "Monto total retenido",
        &pesos(totals.withheld),
    );
    canvas.down(4.0);
    canvas.in_words(
        "Monto total de la operación con letra",
        totals.operation,
        None,
    );
    if let Some(withheld) = totals.withheld {
        canvas.in_words("Monto total retenido con letra", withheld, None);
    }
    canvas.down(4.0);
    canvas.rule();
}

/// Each complement and the amounts that matter in it; a proportion (`ProporcionRem`)
/// is a number, not money.
fn complements(canvas: &mut Canvas, complements: &[Complement]) {
    canvas.line(Font::Bold, 10.0, "Complementos");
    for c in complements {
        canvas.paragraph(
            Font::Bold,
            9.0,
            LEFT,
            &format!("{} (versión {})", c.name, or_dash(c.version.as_deref())),
        );
        for (name, amount) in &c.amounts {
            let shown = if name.contains("Proporcion") {
                crate::format::number(*amount)
            } else {
                pesos(Some(*amount))
            };
            canvas.amount_row(Font::Regular, LEFT, name, &shown);
        }
    }
    canvas.down(4.0);
    canvas.rule();
}

#[cfg(test)]
mod tests;
