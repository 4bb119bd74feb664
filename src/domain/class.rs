//! The document classes the service keeps: invoices (CFDI) and CFDI de Retenciones.
//! `DocumentClass` is the API's name of one (an extraction's `options.document_class`);
//! each has a marker type that every layer's shared code is generic over: the class's
//! own modules implement that layer's interface for it (`db::classes::Stored`,
//! `routes::documents::Served`) and lays out its rows where it has them
//! (`export::Rows`). A new class is registered here.

wire_enum! {
    /// Which class of document a run extracts (`options.document_class`): invoices
    /// (CFDI, the default) or CFDI de Retenciones, which the SAT serves apart (the e.firma
    /// web service's own hosts; the CIEC portal not at all).
    DocumentClass {
        Invoices => "invoices",
        Retentions => "retentions",
    }
}

impl DocumentClass {
    /// One of them, in words: "invoice", "retention".
    pub fn singular(self) -> &'static str {
        match self {
            DocumentClass::Invoices => "invoice",
            DocumentClass::Retentions => "retention",
        }
    }
}

/// The class of invoices (CFDI: Comprobante 3.2, 3.3, 4.0).
pub struct InvoiceClass;

/// The class of CFDI de Retenciones e Información de Pagos (1.0, 2.0).
pub struct RetentionClass;
