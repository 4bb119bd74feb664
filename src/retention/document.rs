//! The Retenciones element: header, parties, period, totals, withheld taxes, related
//! documents, complements and stamp.

use roxmltree::Node;

use super::{
    complements, ForeignReceiver, Issuer, NationalReceiver, Period, Receiver, Retention, Totals,
    Version, WithheldTax, RET1, RET2,
};
use crate::cfdi::xml::{self, Attr};
use crate::cfdi::{CfdiError, Related};

// Retenciones attributes: the 2.0 spelling, then the 1.0 one.
const INTERNAL_FOLIO: Attr = Attr::new("FolioInt", "FolioInt");
const ISSUED_AT: Attr = Attr::new("FechaExp", "FechaExp");
const KEY: Attr = Attr::new("CveRetenc", "CveRetenc");
const KEY_DESCRIPTION: Attr = Attr::new("DescRetenc", "DescRetenc");
const PLACE_OF_ISSUE: Attr = Attr::modern_only("LugarExpRetenc");
const CERTIFICATE_NUMBER: Attr = Attr::new("NoCertificado", "NumCert");
const SEAL: Attr = Attr::new("Sello", "Sello");

const RELATION_TYPE: Attr = Attr::field("TipoRelacion", "CfdiRetenRelacionados@TipoRelacion");
const RELATED_UUID: Attr = Attr::field("UUID", "CfdiRetenRelacionados@UUID");

const ISSUER_RFC: Attr = Attr::labeled("RfcE", "RFCEmisor", "Emisor@RfcE");
const ISSUER_NAME: Attr = Attr::new("NomDenRazSocE", "NomDenRazSocE");
const ISSUER_CURP: Attr = Attr::new("", "CURPE");
const ISSUER_REGIME: Attr = Attr::modern_only("RegimenFiscalE");

const NATIONALITY: Attr = Attr::new("NacionalidadR", "Nacionalidad");
const NATIONAL_RFC: Attr = Attr::labeled("RfcR", "RFCRecep", "Nacional@RfcR");
const RECEIVER_NAME: Attr = Attr::new("NomDenRazSocR", "NomDenRazSocR");
const NATIONAL_CURP: Attr = Attr::new("CurpR", "CURPR");
const NATIONAL_POSTAL_CODE: Attr = Attr::modern_only("DomicilioFiscalR");
const FOREIGN_TAX_ID: Attr = Attr::new("NumRegIdTribR", "NumRegIdTrib");

const START_MONTH: Attr = Attr::labeled("MesIni", "MesIni", "Periodo@MesIni");
const END_MONTH: Attr = Attr::labeled("MesFin", "MesFin", "Periodo@MesFin");
const YEAR: Attr = Attr::labeled("Ejercicio", "Ejerc", "Periodo@Ejercicio");

const OPERATION: Attr = Attr::labeled(
    "MontoTotOperacion",
    "montoTotOperacion",
    "Totales@MontoTotOperacion",
);
const TAXED: Attr = Attr::labeled("MontoTotGrav", "montoTotGrav", "Totales@MontoTotGrav");
const EXEMPT: Attr = Attr::labeled("MontoTotExent", "montoTotExent", "Totales@MontoTotExent");
const WITHHELD: Attr = Attr::labeled("MontoTotRet", "montoTotRet", "Totales@MontoTotRet");
const BIMONTHLY_PROFIT: Attr = Attr::modern_only("UtilidadBimestral");
const ISR_DUE: Attr = Attr::modern_only("ISRCorrespondiente");

const BASE: Attr = Attr::labeled("BaseRet", "BaseRet", "ImpRetenidos@BaseRet");
const TAX: Attr = Attr::new("ImpuestoRet", "Impuesto");
const AMOUNT: Attr = Attr::labeled("MontoRet", "montoRet", "ImpRetenidos@MontoRet");
const PAYMENT_TYPE: Attr = Attr::new("TipoPagoRet", "TipoPagoRet");

/// Where a document's elements live and how its attributes are spelled.
type Ret = xml::Dialect<Version>;

pub(super) fn parse_root(root: Node<'_, '_>) -> Result<Retention, CfdiError> {
    let ret = identify(root)?;
    let r = ret.reader(root);
    let complement_nodes: Vec<Node> = ret
        .children(root, "Complemento")
        .flat_map(|c| c.descendants())
        .collect();
    let issued_at = match r.raw(ISSUED_AT) {
        Some(_) => Some(r.required_datetime(ISSUED_AT)?.to_owned()),
        None => None,
    };
    Ok(Retention {
        version: ret.version,
        internal_folio: r.string(INTERNAL_FOLIO),
        issued_at,
        key: r.string(KEY),
        key_description: r.string(KEY_DESCRIPTION),
        place_of_issue: r.string(PLACE_OF_ISSUE),
        certificate_number: r.string(CERTIFICATE_NUMBER),
        seal: r.string(SEAL),
        related: parse_related(ret, root)?,
        issuer: parse_issuer(ret, root)?,
        receiver: parse_receiver(ret, root)?,
        period: parse_period(ret, root)?,
        totals: parse_totals(ret, root)?,
        withheld_taxes: parse_withheld(ret, root)?,
        complements: ret
            .children(root, "Complemento")
            .flat_map(|c| c.children())
            .filter(Node::is_element)
            .filter(|node| !xml::is_element(*node, xml::TFD, "TimbreFiscalDigital"))
            .map(complements::parse)
            .collect(),
        stamp: crate::cfdi::stamp::parse(&complement_nodes)?,
    })
}

/// Checks the root is a Retenciones of a known namespace and the version it declares.
fn identify(root: Node<'_, '_>) -> Result<Ret, CfdiError> {
    let tag = root.tag_name();
    let ns = match tag.namespace() {
        Some(RET1) => RET1,
        Some(RET2) => RET2,
        _ => return Err(CfdiError::NotCfdi(xml::expanded_name(root))),
    };
    if tag.name() != "Retenciones" {
        return Err(CfdiError::NotCfdi(xml::expanded_name(root)));
    }
    let declared = root
        .attribute("Version")
        .ok_or(CfdiError::Missing("Version"))?;
    let version = match (ns, declared.trim()) {
        (RET1, "1.0") => Version::V10,
        (RET2, "2.0") => Version::V20,
        _ => {
            let declared = CfdiError::quoted(declared.trim());
            return Err(CfdiError::UnsupportedVersion(declared));
        }
    };
    Ok(Ret::new(ns, version, version == Version::V10))
}

fn parse_related(ret: Ret, root: Node<'_, '_>) -> Result<Vec<Related>, CfdiError> {
    let mut related = Vec::new();
    for node in ret.children(root, "CfdiRetenRelacionados") {
        let r = ret.reader(node);
        if let Some(uuid) = r.checked_uuid(RELATED_UUID)? {
            related.push(Related {
                relation_type: r.string(RELATION_TYPE),
                uuid,
            });
        }
    }
    Ok(related)
}

fn parse_issuer(ret: Ret, root: Node<'_, '_>) -> Result<Issuer, CfdiError> {
    let node = ret
        .child(root, "Emisor")
        .ok_or(CfdiError::Missing("Emisor"))?;
    let r = ret.reader(node);
    Ok(Issuer {
        tax_id: r.required(ISSUER_RFC)?.to_owned(),
        name: r.string(ISSUER_NAME),
        curp: r.string(ISSUER_CURP),
        regime: r.string(ISSUER_REGIME),
    })
}

fn parse_receiver(ret: Ret, root: Node<'_, '_>) -> Result<Option<Receiver>, CfdiError> {
    let Some(node) = ret.child(root, "Receptor") else {
        return Ok(None);
    };
    let national = match ret.child(node, "Nacional") {
        Some(child) => {
            let r = ret.reader(child);
            Some(NationalReceiver {
                tax_id: r.required(NATIONAL_RFC)?.to_owned(),
                name: r.string(RECEIVER_NAME),
                curp: r.string(NATIONAL_CURP),
                postal_code: r.string(NATIONAL_POSTAL_CODE),
            })
        }
        None => None,
    };
    let foreign = ret.child(node, "Extranjero").map(|child| {
        let r = ret.reader(child);
        ForeignReceiver {
            tax_id: r.string(FOREIGN_TAX_ID),
            name: r.string(RECEIVER_NAME),
        }
    });
    Ok(Some(Receiver {
        nationality: ret.reader(node).string(NATIONALITY),
        national,
        foreign,
    }))
}

fn parse_period(ret: Ret, root: Node<'_, '_>) -> Result<Option<Period>, CfdiError> {
    let Some(node) = ret.child(root, "Periodo") else {
        return Ok(None);
    };
    let r = ret.reader(node);
    let required = |attr: Attr, label: &'static str| -> Result<u32, CfdiError> {
        r.integer(attr)?.ok_or(CfdiError::Missing(label))
    };
    Ok(Some(Period {
        start_month: required(START_MONTH, "Periodo@MesIni")?,
        end_month: required(END_MONTH, "Periodo@MesFin")?,
        year: required(YEAR, "Periodo@Ejercicio")?,
    }))
}

fn parse_totals(ret: Ret, root: Node<'_, '_>) -> Result<Totals, CfdiError> {
    let node = ret
        .child(root, "Totales")
        .ok_or(CfdiError::Missing("Totales"))?;
    let r = ret.reader(node);
    Ok(Totals {
        operation: r.required_decimal(OPERATION)?,
        taxed: r.decimal(TAXED)?,
        exempt: r.decimal(EXEMPT)?,
        withheld: r.decimal(WITHHELD)?,
        bimonthly_profit: r.decimal(BIMONTHLY_PROFIT)?,
        isr_due: r.decimal(ISR_DUE)?,
    })
}

fn parse_withheld(ret: Ret, root: Node<'_, '_>) -> Result<Vec<WithheldTax>, CfdiError> {
    ret.children(root, "Totales")
        .flat_map(|totals| ret.children(totals, "ImpRetenidos"))
        .map(|node| {
            let r = ret.reader(node);
            Ok(WithheldTax {
                base: r.decimal(BASE)?,
                tax: r.string(TAX),
                amount: r.required_decimal(AMOUNT)?,
                payment_type: r.string(PAYMENT_TYPE),
            })
        })
        .collect()
}
