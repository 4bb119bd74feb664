//! The Comprobante itself: header, parties, items, relations and stamp.

use roxmltree::Node;

use super::xml::{self, Attr, Reader, CFD3, CFD4};
use super::{
    pagos, payroll, stamp, stated_taxes, taxes, Cfdi, CfdiError, InvoiceType, Item, ItemTax, Party,
    Related, Version,
};

impl Cfdi {
    /// Parses a CFDI; unstamped documents parse (stamp None or stamp.uuid None).
    pub fn parse(bytes: &[u8]) -> Result<Cfdi, CfdiError> {
        parse(bytes)
    }

    /// parse + require a stamp UUID: what ingestion uses.
    pub fn parse_stamped(bytes: &[u8]) -> Result<Cfdi, CfdiError> {
        let cfdi = parse(bytes)?;
        cfdi.uuid()?;
        Ok(cfdi)
    }

    /// The document read from an already built tree (`xml::with_tree`), when the
    /// caller has looked at its root first (ingestion picks the class by it).
    pub(crate) fn from_root(root: Node<'_, '_>) -> Result<Cfdi, CfdiError> {
        parse_comprobante(root)
    }
}

// Comprobante attributes: 3.3/4.0 spelling, then 3.2 spelling.
const TYPE: Attr = Attr::new("TipoDeComprobante", "tipoDeComprobante");
const SERIES: Attr = Attr::new("Serie", "serie");
const FOLIO: Attr = Attr::new("Folio", "folio");
const DATE: Attr = Attr::new("Fecha", "fecha");
const CURRENCY: Attr = Attr::new("Moneda", "Moneda");
const EXCHANGE_RATE: Attr = Attr::new("TipoCambio", "TipoCambio");
const SUBTOTAL: Attr = Attr::new("SubTotal", "subTotal");
const DISCOUNT: Attr = Attr::new("Descuento", "descuento");
const TOTAL: Attr = Attr::new("Total", "total");
// 3.2's metodoDePago holds what later versions call FormaPago; its formaDePago
// ("una sola exhibición" / "parcialidades") has no 3.3 field of the same meaning.
const PAYMENT_METHOD: Attr = Attr::modern_only("MetodoPago");
const PAYMENT_FORM: Attr = Attr::new("FormaPago", "metodoDePago");
const SEAL: Attr = Attr::new("Sello", "sello");
const CERTIFICATE_NUMBER: Attr = Attr::new("NoCertificado", "noCertificado");
const PLACE_OF_ISSUE: Attr = Attr::new("LugarExpedicion", "LugarExpedicion");
const EXPORT: Attr = Attr::modern_only("Exportacion");

// Emisor / Receptor.
const ISSUER_RFC: Attr = Attr::labeled("Rfc", "rfc", "Emisor@Rfc");
const RECEIVER_RFC: Attr = Attr::labeled("Rfc", "rfc", "Receptor@Rfc");
const NAME: Attr = Attr::new("Nombre", "nombre");
const REGIME: Attr = Attr::new("RegimenFiscal", "RegimenFiscal");
const REGIME_32: Attr = Attr::new("Regimen", "Regimen");
const CFDI_USE: Attr = Attr::new("UsoCFDI", "UsoCFDI");
const RECEIVER_REGIME: Attr = Attr::modern_only("RegimenFiscalReceptor");
const RECEIVER_POSTAL_CODE: Attr = Attr::modern_only("DomicilioFiscalReceptor");

// Impuestos (root level).
const TAXES_TRANSFERRED: Attr = Attr::new("TotalImpuestosTrasladados", "totalImpuestosTrasladados");
const TAXES_WITHHELD: Attr = Attr::new("TotalImpuestosRetenidos", "totalImpuestosRetenidos");

// Concepto.
// 3.2's noIdentificacion is the seller's own code, not a SAT product key.
const PRODUCT_CODE: Attr = Attr::modern_only("ClaveProdServ");
const DESCRIPTION: Attr = Attr::labeled("Descripcion", "descripcion", "Concepto@Descripcion");
const QUANTITY: Attr = Attr::labeled("Cantidad", "cantidad", "Concepto@Cantidad");
const UNIT_CODE: Attr = Attr::new("ClaveUnidad", "ClaveUnidad");
const UNIT: Attr = Attr::new("Unidad", "unidad");
const UNIT_PRICE: Attr = Attr::labeled("ValorUnitario", "valorUnitario", "Concepto@ValorUnitario");
const ITEM_DISCOUNT: Attr = Attr::labeled("Descuento", "descuento", "Concepto@Descuento");
const AMOUNT: Attr = Attr::labeled("Importe", "importe", "Concepto@Importe");
const TAX_OBJECT: Attr = Attr::modern_only("ObjetoImp");

// CfdiRelacionados and TimbreFiscalDigital (same spelling in every version).
const RELATION_TYPE: Attr = Attr::field("TipoRelacion", "CfdiRelacionados@TipoRelacion");
const RELATED_UUID: Attr = Attr::field("UUID", "CfdiRelacionado@UUID");

/// Checks the limits, then decodes, parses and maps a whole document.
fn parse(bytes: &[u8]) -> Result<Cfdi, CfdiError> {
    xml::with_tree(bytes, parse_comprobante)
}

/// Where a document's elements live and how its attributes are spelled.
type Cfd = xml::Dialect<Version>;

fn parse_comprobante(root: Node<'_, '_>) -> Result<Cfdi, CfdiError> {
    let cfd = identify(root)?;
    let r = cfd.reader(root);
    let invoice_type = parse_invoice_type(r.required(TYPE)?)?;
    let issued_at = r.required_datetime(DATE)?.to_owned();
    let issuer = parse_issuer(cfd, root)?;
    let receiver = parse_receiver(cfd, root)?;
    let subtotal = r.required_decimal(SUBTOTAL)?;
    let total = r.required_decimal(TOTAL)?;
    let taxes = cfd.child(root, "Impuestos").map(|node| cfd.reader(node));
    let legacy = cfd.legacy();
    let tax_breakdown = taxes::entries(root, cfd.ns, &taxes::CFDI, legacy);
    let tax_total = |attr| taxes.map_or(Ok(None), |t| t.decimal(attr));
    let complements: Vec<Node> = cfd
        .children(root, "Complemento")
        .flat_map(|c| c.descendants())
        .collect();
    // A Pagos complement only means something on a Pago (type P) document.
    let payments = if invoice_type == InvoiceType::P {
        pagos::parse(&complements)?
    } else {
        Vec::new()
    };
    Ok(Cfdi {
        version: cfd.version,
        invoice_type,
        series: r.string(SERIES),
        folio: r.string(FOLIO),
        issued_at,
        issuer,
        receiver,
        currency: r.string(CURRENCY),
        exchange_rate: r.decimal(EXCHANGE_RATE)?,
        subtotal,
        discount: r.decimal(DISCOUNT)?,
        total,
        taxes_transferred: tax_total(TAXES_TRANSFERRED)?,
        taxes_withheld: tax_total(TAXES_WITHHELD)?,
        payment_method: payment_method(r),
        payment_form: r.string(PAYMENT_FORM),
        seal: r.string(SEAL),
        certificate_number: r.string(CERTIFICATE_NUMBER),
        stamp: stamp::parse(&complements)?,
        items: parse_items(cfd, root)?,
        payments,
        related: parse_related(cfd, root),
        place_of_issue: r.string(PLACE_OF_ISSUE),
        export: r.string(EXPORT),
        payment_totals: if invoice_type == InvoiceType::P {
            pagos::totals(&complements)
        } else {
            None
        },
        payroll: if invoice_type == InvoiceType::N {
            payroll::parse(&complements)
        } else {
            Vec::new()
        },
        stated_taxes: stated_taxes::parse(if legacy { &tax_breakdown } else { &[] }, &complements),
        tax_breakdown,
    })
}

/// Checks the root is a Comprobante of a known namespace and version.
fn identify(root: Node<'_, '_>) -> Result<Cfd, CfdiError> {
    let tag = root.tag_name();
    let ns = match tag.namespace() {
        Some(CFD3) => CFD3,
        Some(CFD4) => CFD4,
        _ => return Err(CfdiError::NotCfdi(xml::expanded_name(root))),
    };
    if tag.name() != "Comprobante" {
        return Err(CfdiError::NotCfdi(xml::expanded_name(root)));
    }
    // The attribute's spelling depends on the version it declares, so try both.
    let declared = root
        .attribute("Version")
        .or_else(|| root.attribute("version"))
        .ok_or(CfdiError::Missing("Version"))?;
    let version = match (ns, declared.trim()) {
        (CFD3, "3.2") => Version::V32,
        (CFD3, "3.3") => Version::V33,
        (CFD4, "4.0") => Version::V40,
        _ => {
            let declared = CfdiError::quoted(declared.trim());
            return Err(CfdiError::UnsupportedVersion(declared));
        }
    };
    Ok(Cfd::new(ns, version, version == Version::V32))
}

fn parse_invoice_type(value: &str) -> Result<InvoiceType, CfdiError> {
    InvoiceType::from_code(value).ok_or_else(|| CfdiError::invalid("TipoDeComprobante", value))
}

/// MetodoPago when it is one of the two codes aggregation understands.
fn payment_method(r: Reader<'_, '_>) -> Option<String> {
    r.raw(PAYMENT_METHOD)
        .filter(|m| matches!(*m, "PUE" | "PPD"))
        .map(str::to_owned)
}

fn parse_issuer(cfd: Cfd, root: Node<'_, '_>) -> Result<Party, CfdiError> {
    let node = cfd
        .child(root, "Emisor")
        .ok_or(CfdiError::Missing("Emisor"))?;
    let r = cfd.reader(node);
    // 3.2 puts the regime in RegimenFiscal child elements, later versions in an attribute.
    let regime = if cfd.legacy() {
        cfd.child(node, "RegimenFiscal")
            .and_then(|child| cfd.reader(child).string(REGIME_32))
    } else {
        r.string(REGIME)
    };
    Ok(Party {
        tax_id: r.required(ISSUER_RFC)?.to_owned(),
        name: r.string(NAME),
        regime,
        cfdi_use: None,
        postal_code: None,
    })
}

fn parse_receiver(cfd: Cfd, root: Node<'_, '_>) -> Result<Party, CfdiError> {
    let node = cfd
        .child(root, "Receptor")
        .ok_or(CfdiError::Missing("Receptor"))?;
    let r = cfd.reader(node);
    let cfdi_use = if cfd.legacy() {
        None
    } else {
        r.string(CFDI_USE)
    };
    Ok(Party {
        tax_id: r.required(RECEIVER_RFC)?.to_owned(),
        name: r.string(NAME),
        regime: r.string(RECEIVER_REGIME),
        cfdi_use,
        postal_code: r.string(RECEIVER_POSTAL_CODE),
    })
}

fn parse_items(cfd: Cfd, root: Node<'_, '_>) -> Result<Vec<Item>, CfdiError> {
    cfd.children(root, "Conceptos")
        .flat_map(|list| cfd.children(list, "Concepto"))
        .map(|node| parse_item(cfd, node))
        .collect()
}

fn parse_item(cfd: Cfd, node: Node<'_, '_>) -> Result<Item, CfdiError> {
    let r = cfd.reader(node);
    Ok(Item {
        product_code: r.string(PRODUCT_CODE),
        description: r.required(DESCRIPTION)?.to_owned(),
        quantity: r.required_decimal(QUANTITY)?,
        // 3.3/4.0 have both a SAT unit code and a free-text unit; prefer the code.
        unit: r.string(UNIT_CODE).or_else(|| r.string(UNIT)),
        unit_price: r.required_decimal(UNIT_PRICE)?,
        discount: r.decimal(ITEM_DISCOUNT)?,
        amount: r.required_decimal(AMOUNT)?,
        taxes: parse_item_taxes(cfd, node),
        tax_object: r.string(TAX_OBJECT),
    })
}

/// A concept's Traslado then Retencion entries (3.3 and 4.0; 3.2 concepts have none).
fn parse_item_taxes(cfd: Cfd, item: Node<'_, '_>) -> Vec<ItemTax> {
    taxes::entries(item, cfd.ns, &taxes::CFDI, cfd.legacy())
}

/// CfdiRelacionado entries; ones without a UUID cannot link anything and are skipped.
fn parse_related(cfd: Cfd, root: Node<'_, '_>) -> Vec<Related> {
    let mut related = Vec::new();
    for group in cfd.children(root, "CfdiRelacionados") {
        let relation_type = cfd.reader(group).string(RELATION_TYPE);
        for entry in cfd.children(group, "CfdiRelacionado") {
            if let Some(uuid) = cfd.reader(entry).uuid(RELATED_UUID) {
                related.push(Related {
                    relation_type: relation_type.clone(),
                    uuid,
                });
            }
        }
    }
    related
}
