//! CFDI 4.0 XML, written with quick-xml (which escapes `&`, `<`, quotes…),
//! laid out like the SAT's own: Comprobante, CfdiRelacionados, Emisor,
//! Receptor, Conceptos, Impuestos, then Complemento with Pagos 2.0 or
//! Nómina 1.2 before the TimbreFiscalDigital 1.1.

use std::io;

use chrono::{Datelike, Days, NaiveDate, NaiveDateTime};
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, Event};
use quick_xml::Writer;

use super::amounts::{amounts, money, share, Amounts, Line, Payroll};
use super::catalog::EMPLOYEES;
use super::stamp::{Stamp, SAT_CERTIFICATE_NUMBER};
use super::{Currency, Kind, SandboxInvoice, SandboxPayment};

pub(super) const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";
const CFDI_NS: &str = "http://www.sat.gob.mx/cfd/4";
const CFDI_XSD: &str =
    "http://www.sat.gob.mx/cfd/4 http://www.sat.gob.mx/sitio_internet/cfd/4/cfdv40.xsd";
const PAGOS_NS: &str = "http://www.sat.gob.mx/Pagos20";
const PAGOS_XSD: &str =
    "http://www.sat.gob.mx/Pagos20 http://www.sat.gob.mx/sitio_internet/cfd/Pagos/Pagos20.xsd";
const NOMINA_NS: &str = "http://www.sat.gob.mx/nomina12";
const NOMINA_XSD: &str =
    "http://www.sat.gob.mx/nomina12 http://www.sat.gob.mx/sitio_internet/cfd/nomina/nomina12.xsd";
pub(super) const TFD_NS: &str = "http://www.sat.gob.mx/TimbreFiscalDigital";
pub(super) const TFD_XSD: &str = "http://www.sat.gob.mx/TimbreFiscalDigital http://www.sat.gob.mx/sitio_internet/cfd/TimbreFiscalDigital/TimbreFiscalDigitalv11.xsd";
/// IVA 16%, as c_TasaOCuota writes it.
const IVA_RATE: &str = "0.160000";

/// The stamped XML of `invoice`.
pub(super) fn render(invoice: &SandboxInvoice) -> io::Result<Vec<u8>> {
    let details = &invoice.details;
    let amounts = amounts(details.kind, &details.seed, details.currency);
    let stamp = Stamp::new(invoice);
    let mut doc = Doc::new();
    doc.write(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    doc.open(comprobante(invoice, &amounts, &stamp))?;
    if let Some(uuid) = &details.related_uuid {
        doc.open(el("cfdi:CfdiRelacionados", &[("TipoRelacion", "01")]))?;
        doc.leaf(el("cfdi:CfdiRelacionado", &[("UUID", uuid)]))?;
        doc.close("cfdi:CfdiRelacionados")?;
    }
    doc.leaf(el(
        "cfdi:Emisor",
        &[
            ("Rfc", &invoice.issuer_tax_id),
            ("Nombre", &invoice.issuer_name),
            ("RegimenFiscal", details.issuer_regime),
        ],
    ))?;
    doc.leaf(el(
        "cfdi:Receptor",
        &[
            ("Rfc", &invoice.receiver_tax_id),
            ("Nombre", &invoice.receiver_name),
            ("DomicilioFiscalReceptor", &details.receiver_zip),
            ("RegimenFiscalReceptor", details.receiver_regime),
            ("UsoCFDI", details.use_cfdi),
        ],
    ))?;
    conceptos(&mut doc, details.kind, &amounts)?;
    impuestos(&mut doc, &amounts)?;
    doc.open(el("cfdi:Complemento", &[]))?;
    if let Some(payment) = &details.payment {
        pagos(&mut doc, payment)?;
    }
    if let (Some(payroll), Some(employee)) = (amounts.payroll, details.employee) {
        nomina(&mut doc, invoice.issued_at.date(), &payroll, employee)?;
    }
    timbre(&mut doc, invoice, &stamp)?;
    doc.close("cfdi:Complemento")?;
    doc.close("cfdi:Comprobante")?;
    super::sealing::seal_and_stamp(&invoice.uuid, &invoice.issuer_tax_id, doc.finish())
}

/// A thin layer over quick-xml's writer, indented like SAT samples.
pub(super) struct Doc {
    writer: Writer<Vec<u8>>,
}

impl Doc {
    pub(super) fn new() -> Self {
        Doc {
            writer: Writer::new_with_indent(Vec::with_capacity(8 * 1024), b' ', 2),
        }
    }

    pub(super) fn write(&mut self, event: Event<'_>) -> io::Result<()> {
        self.writer.write_event(event)
    }

    pub(super) fn open(&mut self, element: BytesStart<'_>) -> io::Result<()> {
        self.write(Event::Start(element))
    }

    pub(super) fn leaf(&mut self, element: BytesStart<'_>) -> io::Result<()> {
        self.write(Event::Empty(element))
    }

    pub(super) fn close(&mut self, name: &str) -> io::Result<()> {
        self.write(Event::End(BytesEnd::new(name)))
    }

    pub(super) fn finish(self) -> Vec<u8> {
        self.writer.into_inner()
    }
}

/// An element with attributes (values are escaped by quick-xml).
pub(super) fn el<'a>(name: &'a str, attributes: &[(&str, &str)]) -> BytesStart<'a> {
    BytesStart::new(name).with_attributes(attributes.iter().copied())
}

/// `Fecha`-style local timestamp, without zone.
pub(super) fn timestamp(at: NaiveDateTime) -> String {
    at.format("%Y-%m-%dT%H:%M:%S").to_string()
}

/// Amounts of a `P` CFDI are written as plain "0", like SAT samples.
fn amount(kind: Kind, cents: i64) -> String {
    if kind == Kind::Payment {
        "0".to_owned()
    } else {
        money(cents)
    }
}

fn comprobante(invoice: &SandboxInvoice, amounts: &Amounts, stamp: &Stamp) -> BytesStart<'static> {
    let details = &invoice.details;
    let kind = details.kind;
    let mut root = el(
        "cfdi:Comprobante",
        &[("xmlns:cfdi", CFDI_NS), ("xmlns:xsi", XSI_NS)],
    );
    let location = match kind {
        Kind::Payment => {
            root.push_attribute(("xmlns:pago20", PAGOS_NS));
            format!("{CFDI_XSD} {PAGOS_XSD}")
        }
        Kind::Payroll => {
            root.push_attribute(("xmlns:nomina12", NOMINA_NS));
            format!("{CFDI_XSD} {NOMINA_XSD}")
        }
        _ => CFDI_XSD.to_owned(),
    };
    let fecha = timestamp(invoice.issued_at);
    root.extend_attributes([
        ("xsi:schemaLocation", location.as_str()),
        ("Version", "4.0"),
        ("Serie", details.serie),
        ("Folio", &details.folio),
        ("Fecha", &fecha),
        ("Sello", &stamp.seal),
    ]);
    if let Some(form) = details.payment_form {
        root.push_attribute(("FormaPago", form));
    }
    root.extend_attributes([
        ("NoCertificado", stamp.certificate_number.as_str()),
        ("Certificado", &stamp.certificate),
        ("SubTotal", &amount(kind, amounts.subtotal)),
    ]);
    if amounts.discount > 0 {
        root.push_attribute(("Descuento", money(amounts.discount).as_str()));
    }
    root.push_attribute(("Moneda", details.currency.code()));
    if let Currency::Usd { rate_e4 } = details.currency {
        let rate = format!("{}.{:04}", rate_e4 / 10_000, rate_e4 % 10_000);
        root.push_attribute(("TipoCambio", rate.as_str()));
    }
    let mut letter = [0; 4];
    root.extend_attributes([
        ("Total", amount(kind, amounts.total).as_str()),
        (
            "TipoDeComprobante",
            invoice.invoice_type.encode_utf8(&mut letter),
        ),
        ("Exportacion", "01"),
    ]);
    if let Some(method) = kind.payment_method() {
        root.push_attribute(("MetodoPago", method));
    }
    root.push_attribute(("LugarExpedicion", details.issuer_zip.as_str()));
    root
}

fn conceptos(doc: &mut Doc, kind: Kind, amounts: &Amounts) -> io::Result<()> {
    doc.open(el("cfdi:Conceptos", &[]))?;
    for line in &amounts.lines {
        concepto(doc, kind, line)?;
    }
    doc.close("cfdi:Conceptos")
}

fn concepto(doc: &mut Doc, kind: Kind, line: &Line) -> io::Result<()> {
    let mut concepto = el(
        "cfdi:Concepto",
        &[
            ("ClaveProdServ", line.clave),
            ("Cantidad", &line.qty.to_string()),
            ("ClaveUnidad", line.unit),
        ],
    );
    if !line.unit_name.is_empty() {
        concepto.push_attribute(("Unidad", line.unit_name));
    }
    concepto.extend_attributes([
        ("Descripcion", line.description),
        ("ValorUnitario", &amount(kind, line.unit_cents)),
        ("Importe", &amount(kind, line.amount)),
    ]);
    if line.discount > 0 {
        concepto.push_attribute(("Descuento", money(line.discount).as_str()));
    }
    // "02": taxable; "01": not subject to tax (payroll, transfers, payments).
    let Some(iva) = line.iva else {
        concepto.push_attribute(("ObjetoImp", "01"));
        return doc.leaf(concepto);
    };
    concepto.push_attribute(("ObjetoImp", "02"));
    doc.open(concepto)?;
    doc.open(el("cfdi:Impuestos", &[]))?;
    doc.open(el("cfdi:Traslados", &[]))?;
    doc.leaf(traslado(line.tax_base(), iva))?;
    doc.close("cfdi:Traslados")?;
    doc.close("cfdi:Impuestos")?;
    doc.close("cfdi:Concepto")
}

/// An IVA 16% `cfdi:Traslado`.
fn traslado(base: i64, iva: i64) -> BytesStart<'static> {
    el(
        "cfdi:Traslado",
        &[
            ("Base", &money(base)),
            ("Impuesto", "002"),
            ("TipoFactor", "Tasa"),
            ("TasaOCuota", IVA_RATE),
            ("Importe", &money(iva)),
        ],
    )
}

/// The invoice-level tax summary, when some line is taxable.
fn impuestos(doc: &mut Doc, amounts: &Amounts) -> io::Result<()> {
    let Some(iva) = amounts.iva else {
        return Ok(());
    };
    let base = amounts
        .lines
        .iter()
        .filter(|line| line.iva.is_some())
        .map(Line::tax_base)
        .sum();
    doc.open(el(
        "cfdi:Impuestos",
        &[("TotalImpuestosTrasladados", &money(iva))],
    ))?;
    doc.open(el("cfdi:Traslados", &[]))?;
    doc.leaf(traslado(base, iva))?;
    doc.close("cfdi:Traslados")?;
    doc.close("cfdi:Impuestos")
}

/// Pagos 2.0 with one Pago paying one installment of one PPD invoice, in MXN.
fn pagos(doc: &mut Doc, payment: &SandboxPayment) -> io::Result<()> {
    let amount = payment.amount.to_string();
    doc.open(el("pago20:Pagos", &[("Version", "2.0")]))?;
    doc.leaf(el("pago20:Totales", &[("MontoTotalPagos", &amount)]))?;
    doc.open(el(
        "pago20:Pago",
        &[
            ("FechaPago", &timestamp(payment.paid_at)),
            ("FormaDePagoP", payment.payment_form),
            ("MonedaP", "MXN"),
            ("TipoCambioP", "1"),
            ("Monto", &amount),
        ],
    ))?;
    doc.leaf(el(
        "pago20:DoctoRelacionado",
        &[
            ("IdDocumento", &payment.related_uuid),
            ("Serie", &payment.related_serie),
            ("Folio", &payment.related_folio),
            ("MonedaDR", "MXN"),
            ("EquivalenciaDR", "1"),
            ("NumParcialidad", &payment.installment.to_string()),
            ("ImpSaldoAnt", &payment.previous_balance.to_string()),
            ("ImpPagado", &amount),
            ("ImpSaldoInsoluto", &payment.outstanding_balance.to_string()),
            ("ObjetoImpDR", "01"),
        ],
    ))?;
    doc.close("pago20:Pago")?;
    doc.close("pago20:Pagos")
}

/// The fortnight a payroll paid on `day` covers: 1st-15th or 16th-month end.
fn fortnight(day: NaiveDate) -> (NaiveDate, NaiveDate) {
    let first_of_month = day.with_day(1).unwrap_or(day);
    if day.day() <= 15 {
        (first_of_month, first_of_month.with_day(15).unwrap_or(day))
    } else {
        let next_month = first_of_month.checked_add_months(chrono::Months::new(1));
        let last = next_month
            .and_then(|d| d.checked_sub_days(Days::new(1)))
            .unwrap_or(day);
        (first_of_month.with_day(16).unwrap_or(day), last)
    }
}

/// A minimal Nómina 1.2: one salary perception, IMSS and ISR deductions.
fn nomina(doc: &mut Doc, paid_on: NaiveDate, payroll: &Payroll, employee: usize) -> io::Result<()> {
    let worker = &EMPLOYEES[employee % EMPLOYEES.len()];
    let (start, end) = fortnight(paid_on);
    let hired =
        NaiveDate::from_ymd_opt(2015 + employee as i32, 1 + employee as u32, 7).unwrap_or(start);
    let weeks = (end - hired).num_weeks().max(1);
    let salary = money(payroll.salary);
    let deductions = money(payroll.social_security + payroll.income_tax);
    doc.open(el(
        "nomina12:Nomina",
        &[
            ("Version", "1.2"),
            ("TipoNomina", "O"),
            ("FechaPago", &paid_on.to_string()),
            ("FechaInicialPago", &start.to_string()),
            ("FechaFinalPago", &end.to_string()),
            (
                "NumDiasPagados",
                &format!("{}.000", (end - start).num_days() + 1),
            ),
            ("TotalPercepciones", &salary),
            ("TotalDeducciones", &deductions),
        ],
    ))?;
    doc.leaf(el(
        "nomina12:Emisor",
        &[("RegistroPatronal", "B5510768108")],
    ))?;
    doc.leaf(el(
        "nomina12:Receptor",
        &[
            ("Curp", worker.curp),
            ("NumSeguridadSocial", worker.nss),
            ("FechaInicioRelLaboral", &hired.to_string()),
            ("Antigüedad", &format!("P{weeks}W")),
            ("TipoContrato", "01"),
            ("TipoJornada", "01"),
            ("TipoRegimen", "02"),
            ("NumEmpleado", &format!("{:04}", employee + 1)),
            ("PeriodicidadPago", "04"),
            // Daily salary × 1.0452, the minimum integration factor.
            (
                "SalarioDiarioIntegrado",
                &money(share(payroll.salary, 10_452, 150_000)),
            ),
            ("ClaveEntFed", "CMX"),
        ],
    ))?;
    doc.open(el(
        "nomina12:Percepciones",
        &[
            ("TotalSueldos", &salary),
            ("TotalGravado", &salary),
            ("TotalExento", "0.00"),
        ],
    ))?;
    doc.leaf(el(
        "nomina12:Percepcion",
        &[
            ("TipoPercepcion", "001"),
            ("Clave", "001"),
            ("Concepto", "Sueldo"),
            ("ImporteGravado", &salary),
            ("ImporteExento", "0.00"),
        ],
    ))?;
    doc.close("nomina12:Percepciones")?;
    doc.open(el(
        "nomina12:Deducciones",
        &[
            ("TotalOtrasDeducciones", &money(payroll.social_security)),
            ("TotalImpuestosRetenidos", &money(payroll.income_tax)),
        ],
    ))?;
    deduccion(doc, "001", "Seguridad social", payroll.social_security)?;
    deduccion(doc, "002", "ISR", payroll.income_tax)?;
    doc.close("nomina12:Deducciones")?;
    doc.close("nomina12:Nomina")
}

fn deduccion(doc: &mut Doc, kind: &str, concept: &str, cents: i64) -> io::Result<()> {
    doc.leaf(el(
        "nomina12:Deduccion",
        &[
            ("TipoDeduccion", kind),
            ("Clave", kind),
            ("Concepto", concept),
            ("Importe", &money(cents)),
        ],
    ))
}

fn timbre(doc: &mut Doc, invoice: &SandboxInvoice, stamp: &Stamp) -> io::Result<()> {
    doc.leaf(el(
        "tfd:TimbreFiscalDigital",
        &[
            ("xmlns:tfd", TFD_NS),
            ("xmlns:xsi", XSI_NS),
            ("xsi:schemaLocation", TFD_XSD),
            ("Version", "1.1"),
            ("UUID", &invoice.uuid),
            ("FechaTimbrado", &timestamp(stamp.stamped_at)),
            ("RfcProvCertif", stamp.pac),
            ("SelloCFD", &stamp.seal),
            ("NoCertificadoSAT", SAT_CERTIFICATE_NUMBER),
            ("SelloSAT", &stamp.sat_seal),
        ],
    ))
}
