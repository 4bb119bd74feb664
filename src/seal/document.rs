//! What a sealed document says about its seal, for each class and version: which SAT
//! stylesheet builds its original string, which hash signs it, and where the seal, the
//! certificate, its number, the date and the issuer's RFC are written.

use roxmltree::Node;

use crate::cfdi::xml::{CFD3, CFD4, TFD};

pub(crate) const RETENCIONES1: &str = "http://www.sat.gob.mx/esquemas/retencionpago/1";
pub(crate) const RETENCIONES2: &str = "http://www.sat.gob.mx/esquemas/retencionpago/2";

/// A class and version the SAT publishes a cadena original stylesheet for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Cfdi32,
    Cfdi33,
    Cfdi40,
    Retenciones10,
    Retenciones20,
    Tfd10,
    Tfd11,
}

/// The hashes the issuer may have signed with. CFDI 3.2 and Retenciones 1.0 were
/// signed with SHA-1 (the shared 3.2 and 1.0 samples are), SHA-256 allowed later on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    Sha1,
    Sha256,
}

impl Hash {
    pub fn label(self) -> &'static str {
        match self {
            Hash::Sha1 => "SHA-1",
            Hash::Sha256 => "SHA-256",
        }
    }
}

impl Kind {
    /// The master stylesheet's path under `src/seal/stylesheets`.
    pub fn stylesheet(self) -> &'static str {
        match self {
            Kind::Cfdi32 => {
                "www.sat.gob.mx/sitio_internet/cfd/3/cadenaoriginal_3_2/cadenaoriginal_3_2.xslt"
            }
            Kind::Cfdi33 => {
                "www.sat.gob.mx/sitio_internet/cfd/3/cadenaoriginal_3_3/cadenaoriginal_3_3.xslt"
            }
            Kind::Cfdi40 => {
                "www.sat.gob.mx/sitio_internet/cfd/4/cadenaoriginal_4_0/cadenaoriginal_4_0.xslt"
            }
            Kind::Retenciones10 => "www.sat.gob.mx/esquemas/retencionpago/1/retenciones.xslt",
            Kind::Retenciones20 => "www.sat.gob.mx/esquemas/retencionpago/2/retenciones.xslt",
            Kind::Tfd10 => {
                "www.sat.gob.mx/sitio_internet/timbrefiscaldigital/cadenaoriginal_TFD_1_0.xslt"
            }
            Kind::Tfd11 => {
                "www.sat.gob.mx/sitio_internet/cfd/TimbreFiscalDigital/cadenaoriginal_TFD_1_1.xslt"
            }
        }
    }

    /// The attributes of the root that hold the seal, the certificate and its number.
    pub fn seal_attributes(self) -> Option<(&'static str, &'static str, &'static str)> {
        match self {
            Kind::Cfdi32 => Some(("sello", "certificado", "noCertificado")),
            Kind::Cfdi33 | Kind::Cfdi40 => Some(("Sello", "Certificado", "NoCertificado")),
            Kind::Retenciones10 => Some(("Sello", "Cert", "NumCert")),
            Kind::Retenciones20 => Some(("Sello", "Certificado", "NoCertificado")),
            Kind::Tfd10 | Kind::Tfd11 => None,
        }
    }

    pub fn hashes(self) -> &'static [Hash] {
        match self {
            Kind::Cfdi32 | Kind::Retenciones10 => &[Hash::Sha1, Hash::Sha256],
            Kind::Tfd10 => &[Hash::Sha1],
            Kind::Cfdi33 | Kind::Cfdi40 | Kind::Retenciones20 | Kind::Tfd11 => &[Hash::Sha256],
        }
    }

    /// The kind of a document's root element (or of a stamp), by namespace URI and
    /// version attribute; `None` for anything else.
    pub fn of(node: Node<'_, '_>) -> Option<Kind> {
        let version = node.attribute("Version").or(node.attribute("version"));
        let tag = node.tag_name();
        Some(match (tag.namespace()?, tag.name(), version?) {
            (CFD3, "Comprobante", "3.2") => Kind::Cfdi32,
            (CFD3, "Comprobante", "3.3") => Kind::Cfdi33,
            (CFD4, "Comprobante", "4.0") => Kind::Cfdi40,
            (RETENCIONES1, "Retenciones", "1.0") => Kind::Retenciones10,
            (RETENCIONES2, "Retenciones", "2.0") => Kind::Retenciones20,
            (TFD, "TimbreFiscalDigital", "1.0") => Kind::Tfd10,
            (TFD, "TimbreFiscalDigital", "1.1") => Kind::Tfd11,
            _ => return None,
        })
    }
}

/// The seal's fields of a document, as written (attribute values unnormalised).
#[derive(Debug, Clone)]
pub struct Signed<'a, 'i> {
    pub kind: Kind,
    pub root: Node<'a, 'i>,
    pub seal: Option<&'a str>,
    pub certificate: Option<&'a str>,
    pub certificate_number: Option<&'a str>,
    /// `Fecha` (CFDI, no time zone) or `FechaExp` (Retenciones, maybe with one).
    pub date: Option<&'a str>,
    pub issuer_rfc: Option<&'a str>,
    /// The TimbreFiscalDigital, when the document is stamped.
    pub stamp: Option<Node<'a, 'i>>,
}

impl<'a, 'i> Signed<'a, 'i> {
    /// Reads a document's root element; `None` when it is no sealed class the SAT
    /// publishes a stylesheet for.
    pub fn read(root: Node<'a, 'i>) -> Option<Self> {
        let kind = Kind::of(root)?;
        let ns = root.tag_name().namespace()?;
        let emisor = root.children().find(|n| {
            n.is_element()
                && n.tag_name().namespace() == Some(ns)
                && n.tag_name().name() == "Emisor"
        });
        let emisor_attr = |name: &str| emisor.and_then(|e| e.attribute(name));
        let (seal, certificate, number, date, rfc) = match kind {
            Kind::Cfdi32 => ("sello", "certificado", "noCertificado", "fecha", "rfc"),
            Kind::Cfdi33 | Kind::Cfdi40 => {
                ("Sello", "Certificado", "NoCertificado", "Fecha", "Rfc")
            }
            Kind::Retenciones10 => ("Sello", "Cert", "NumCert", "FechaExp", "RFCEmisor"),
            Kind::Retenciones20 => ("Sello", "Certificado", "NoCertificado", "FechaExp", "RfcE"),
            Kind::Tfd10 | Kind::Tfd11 => return None,
        };
        let complemento = root.children().filter(|n| {
            n.is_element()
                && n.tag_name().namespace() == Some(ns)
                && n.tag_name().name() == "Complemento"
        });
        let stamp = complemento.flat_map(|c| c.children()).find(|n| {
            n.is_element()
                && n.tag_name().namespace() == Some(TFD)
                && n.tag_name().name() == "TimbreFiscalDigital"
        });
        Some(Signed {
            kind,
            root,
            seal: root.attribute(seal),
            certificate: root.attribute(certificate),
            certificate_number: root.attribute(number),
            date: root.attribute(date),
            issuer_rfc: emisor_attr(rfc),
            stamp,
        })
    }
}

/// A stamp's fields: the seal it carries of the document, its own, and the SAT
/// certificate's number (1.0 spells them in lower camel case).
#[derive(Debug, Clone)]
pub struct Stamp<'a, 'i> {
    pub node: Node<'a, 'i>,
    pub kind: Option<Kind>,
    pub seal_cfd: Option<&'a str>,
    pub sat_seal: Option<&'a str>,
    pub sat_certificate_number: Option<&'a str>,
}

impl<'a, 'i> Stamp<'a, 'i> {
    pub fn read(node: Node<'a, 'i>) -> Self {
        let either = |upper: &str, lower: &str| node.attribute(upper).or(node.attribute(lower));
        Stamp {
            node,
            kind: Kind::of(node),
            seal_cfd: either("SelloCFD", "selloCFD"),
            sat_seal: either("SelloSAT", "selloSAT"),
            sat_certificate_number: either("NoCertificadoSAT", "noCertificadoSAT"),
        }
    }
}
