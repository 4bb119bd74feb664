//! Where each call goes and the `SOAPAction` it carries (service version 1.5). The bases
//! are parameters so tests, and a setting, can point the client at another server.

/// The SAT's host for authentication, queries and verification.
pub const SAT_REQUEST_BASE: &str = "https://cfdidescargamasivasolicitud.clouda.sat.gob.mx";
/// The SAT's host for package downloads.
pub const SAT_DOWNLOAD_BASE: &str = "https://cfdidescargamasiva.clouda.sat.gob.mx";
/// CFDI de Retenciones have hosts of their own since service version 1.5, with the same
/// paths, actions and request bodies, and a token of their own.
pub const SAT_RETENTIONS_REQUEST_BASE: &str =
    "https://retendescargamasivasolicitud.clouda.sat.gob.mx";
pub const SAT_RETENTIONS_DOWNLOAD_BASE: &str = "https://retendescargamasiva.clouda.sat.gob.mx";

const AUTHENTICATE_PATH: &str = "/Autenticacion/Autenticacion.svc";
const QUERY_PATH: &str = "/SolicitaDescargaService.svc";
const VERIFY_PATH: &str = "/VerificaSolicitudDescargaService.svc";
const DOWNLOAD_PATH: &str = "/DescargaMasivaService.svc";

/// The four service URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    pub authenticate: String,
    pub query: String,
    pub verify: String,
    pub download: String,
}

impl Endpoints {
    /// The service's paths on the given bases (scheme and host, optionally a prefix).
    pub fn new(request_base: &str, download_base: &str) -> Self {
        let request = request_base.trim_end_matches('/');
        let download = download_base.trim_end_matches('/');
        Self {
            authenticate: format!("{request}{AUTHENTICATE_PATH}"),
            query: format!("{request}{QUERY_PATH}"),
            verify: format!("{request}{VERIFY_PATH}"),
            download: format!("{download}{DOWNLOAD_PATH}"),
        }
    }

    /// The real service.
    pub fn sat() -> Self {
        Self::new(SAT_REQUEST_BASE, SAT_DOWNLOAD_BASE)
    }

    /// The real service's hosts for CFDI de Retenciones.
    pub fn sat_retentions() -> Self {
        Self::new(SAT_RETENTIONS_REQUEST_BASE, SAT_RETENTIONS_DOWNLOAD_BASE)
    }
}

/// One kind of call to the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Authenticate,
    QueryIssued,
    QueryReceived,
    /// One CFDI by its UUID (`SolicitaDescargaFolio`).
    QueryUuid,
    Verify,
    Download,
}

impl Operation {
    pub const ALL: [Operation; 6] = [
        Operation::Authenticate,
        Operation::QueryIssued,
        Operation::QueryReceived,
        Operation::QueryUuid,
        Operation::Verify,
        Operation::Download,
    ];

    /// The operation a `SOAPAction` names (what a server, or a fake one, routes on).
    pub fn from_soap_action(action: &str) -> Option<Operation> {
        let action = action.trim().trim_matches('"');
        Self::ALL.into_iter().find(|op| op.soap_action() == action)
    }

    pub fn soap_action(self) -> &'static str {
        match self {
            Operation::Authenticate => "http://DescargaMasivaTerceros.gob.mx/IAutenticacion/Autentica",
            Operation::QueryIssued => {
                "http://DescargaMasivaTerceros.sat.gob.mx/ISolicitaDescargaService/SolicitaDescargaEmitidos"
            }
            Operation::QueryReceived => {
                "http://DescargaMasivaTerceros.sat.gob.mx/ISolicitaDescargaService/SolicitaDescargaRecibidos"
            }
            Operation::QueryUuid => {
                "http://DescargaMasivaTerceros.sat.gob.mx/ISolicitaDescargaService/SolicitaDescargaFolio"
            }
            Operation::Verify => {
                "http://DescargaMasivaTerceros.sat.gob.mx/IVerificaSolicitudDescargaService/VerificaSolicitudDescarga"
            }
            Operation::Download => {
                "http://DescargaMasivaTerceros.sat.gob.mx/IDescargaMasivaTercerosService/Descargar"
            }
        }
    }

    pub fn url(self, endpoints: &Endpoints) -> &str {
        match self {
            Operation::Authenticate => &endpoints.authenticate,
            Operation::QueryIssued | Operation::QueryReceived | Operation::QueryUuid => {
                &endpoints.query
            }
            Operation::Verify => &endpoints.verify,
            Operation::Download => &endpoints.download,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sat_endpoints_are_the_documented_ones() {
        let sat = Endpoints::sat();
        assert_eq!(
            Operation::Authenticate.url(&sat),
            "https://cfdidescargamasivasolicitud.clouda.sat.gob.mx/Autenticacion/Autenticacion.svc"
        );
        assert_eq!(
            Operation::QueryReceived.url(&sat),
            "https://cfdidescargamasivasolicitud.clouda.sat.gob.mx/SolicitaDescargaService.svc"
        );
        assert_eq!(
            Operation::Download.url(&sat),
            "https://cfdidescargamasiva.clouda.sat.gob.mx/DescargaMasivaService.svc"
        );
    }

    #[test]
    fn retentions_use_their_own_hosts_with_the_same_paths() {
        let reten = Endpoints::sat_retentions();
        assert_eq!(
            reten.authenticate,
            "https://retendescargamasivasolicitud.clouda.sat.gob.mx/Autenticacion/Autenticacion.svc"
        );
        assert_eq!(
            reten.query,
            "https://retendescargamasivasolicitud.clouda.sat.gob.mx/SolicitaDescargaService.svc"
        );
        assert_eq!(
            reten.verify,
            "https://retendescargamasivasolicitud.clouda.sat.gob.mx/VerificaSolicitudDescargaService.svc"
        );
        assert_eq!(
            reten.download,
            "https://retendescargamasiva.clouda.sat.gob.mx/DescargaMasivaService.svc"
        );
    }

    #[test]
    fn actions_name_their_operation() {
        for op in Operation::ALL {
            assert_eq!(Operation::from_soap_action(op.soap_action()), Some(op));
        }
        let quoted = format!("\"{}\"", Operation::Verify.soap_action());
        assert_eq!(
            Operation::from_soap_action(&quoted),
            Some(Operation::Verify)
        );
        assert_eq!(Operation::from_soap_action("Autentica"), None);
    }

    #[test]
    fn bases_are_configurable_with_or_without_a_trailing_slash() {
        let local = Endpoints::new("http://127.0.0.1:9000/", "http://127.0.0.1:9001/dl");
        assert_eq!(
            local.verify,
            "http://127.0.0.1:9000/VerificaSolicitudDescargaService.svc"
        );
        assert_eq!(
            local.download,
            "http://127.0.0.1:9001/dl/DescargaMasivaService.svc"
        );
    }
}
