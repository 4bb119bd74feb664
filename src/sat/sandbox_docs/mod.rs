// TEMPORARY shim until the generator lands (not committed).
use chrono::{NaiveDate, NaiveDateTime};
use rust_decimal::Decimal;
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Issued,
    Received,
}
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxInvoice {
    pub uuid: String,
    pub invoice_type: char,
    pub issuer_tax_id: String,
    pub issuer_name: String,
    pub receiver_tax_id: String,
    pub receiver_name: String,
    pub issued_at: NaiveDateTime,
    pub total: Decimal,
    pub cancelled_at: Option<NaiveDateTime>,
    pub cancellation_seen_late: bool,
    pub xml_withheld_first: bool,
    pub has_pdf: bool,
}
pub fn invoices_for_period(
    _t: &str,
    _d: Direction,
    _f: NaiveDate,
    _to: NaiveDate,
) -> Vec<SandboxInvoice> {
    vec![]
}
pub fn render_xml(_t: &str, _d: Direction, _i: &SandboxInvoice) -> Vec<u8> {
    vec![]
}
pub fn render_pdf(_t: &str, _d: Direction, _i: &SandboxInvoice) -> Option<Vec<u8>> {
    None
}
