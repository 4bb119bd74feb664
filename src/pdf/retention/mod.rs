//! The printed representation of a CFDI de Retenciones, rendered from its parsed XML
//! (the SAT gives no PDF of one in its downloads). Like the invoice's: amounts as the
//! XML writes them, codes as codes, every text wrapped to its column; it ends with the
//! stamp's block and the QR code of the SAT's retenciones verification site.

use chrono::NaiveDateTime;

use super::{stamp, verification, Canvas, Font, Info, LEFT, RIGHT};
use crate::cfdi::Decimal;
use crate::retention::{Complement, Retention};

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

fn or_dash(value: Option<&str>) -> &str {
    value.filter(|v| !v.is_empty()).unwrap_or("-")
}

fn money(value: Option<Decimal>) -> String {
    value.map_or_else(|| "-".to_owned(), |d| d.to_string())
}

/// `001 ISR` for the CFDI catalog's codes (RET 2.0) and RET 1.0's two-digit ones.
fn tax_name(code: Option<&str>) -> String {
    match code {
        Some("001" | "01") => format!("{} ISR", code.unwrap_or_default()),
        Some("002" | "02") => format!("{} IVA", code.unwrap_or_default()),
        Some("003" | "03") => format!("{} IEPS", code.unwrap_or_default()),
        other => or_dash(other).to_owned(),
    }
}

fn header(canvas: &mut Canvas, r: &Retention) {
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
            or_dash(r.issued_at.as_deref()),
            r.version.as_str()
        ),
    );
    canvas.paragraph(
        Font::Regular,
        9.0,
        LEFT,
        &format!(
            "Clave de retención: {}    Descripción: {}",
            or_dash(r.key.as_deref()),
            or_dash(r.key_description.as_deref())
        ),
    );
    if let Some(place) = &r.place_of_issue {
        canvas.line(Font::Regular, 9.0, &format!("Lugar de expedición: {place}"));
    }
    if let Some(p) = r.period {
        canvas.line(
            Font::Regular,
            9.0,
            &format!(
                "Periodo: mes {} a mes {} del ejercicio {}",
                p.start_month, p.end_month, p.year
            ),
        );
    }
    canvas.down(4.0);
    canvas.rule();
}

fn parties(canvas: &mut Canvas, r: &Retention) {
    canvas.line(Font::Bold, 10.0, "Emisor");
    let mut issuer = format!(
        "RFC: {}    Nombre: {}",
        r.issuer.tax_id,
        or_dash(r.issuer.name.as_deref())
    );
    if let Some(curp) = &r.issuer.curp {
        issuer.push_str(&format!("    CURP: {curp}"));
    }
    if let Some(regime) = &r.issuer.regime {
        issuer.push_str(&format!("    Régimen fiscal: {regime}"));
    }
    canvas.paragraph(Font::Regular, 9.0, LEFT, &issuer);
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
                "CFDI de retención relacionado (tipo de relación {}): {}",
                or_dash(related.relation_type.as_deref()),
                related.uuid
            ),
        );
    }
    canvas.down(4.0);
    canvas.rule();
}

/// A label at the left and its amount right-aligned.
fn amount_row(canvas: &mut Canvas, font: Font, label: &str, amount: &str) {
    canvas.room(12.0);
    canvas.text_right(font, 9.0, RIGHT, amount);
    let width = RIGHT - LEFT - Font::Regular.width(9.0, amount) - 16.0;
    for (n, line) in font.fit(9.0, label, width).iter().enumerate() {
        if n > 0 {
            canvas.room(12.0);
        }
        canvas.text(font, 9.0, LEFT, line);
        canvas.down(12.0);
    }
}

fn totals(canvas: &mut Canvas, r: &Retention) {
    canvas.line(Font::Bold, 10.0, "Impuestos retenidos");
    for t in &r.withheld_taxes {
        let label = format!(
            "{}    Base: {}    Tipo de pago: {}",
            tax_name(t.tax.as_deref()),
            money(t.base),
            or_dash(t.payment_type.as_deref())
        );
        amount_row(canvas, Font::Regular, &label, &t.amount.to_string());
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
        amount_row(canvas, Font::Regular, label, &money(amount));
    }
    amount_row(
        canvas,
        Font::Bold,
        "Monto total retenido",
        &money(totals.withheld),
    );
    canvas.down(4.0);
    canvas.rule();
}

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
            amount_row(canvas, Font::Regular, name, &amount.to_string());
        }
    }
    canvas.down(4.0);
    canvas.rule();
}

#[cfg(test)]
mod tests;
