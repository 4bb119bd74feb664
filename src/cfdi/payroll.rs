//! The Nómina 1.2 complement as the printed payroll receipt shows it: read leniently
//! (a value that cannot be read is None), so payroll detail never makes a document
//! unreadable. Nómina 1.1 (CFDI 3.2's) is not read: its receipt prints without it.

use roxmltree::Node;

use super::xml::{self, Attr, Reader};
use super::{Employee, Payroll, PayrollLine};

const NOMINA12: &str = "http://www.sat.gob.mx/nomina12";

/// Every Nómina 1.2 complement among `complements` (every node under Complemento).
pub(super) fn parse(complements: &[Node<'_, '_>]) -> Vec<Payroll> {
    complements
        .iter()
        .filter(|n| xml::is_element(**n, NOMINA12, "Nomina"))
        .map(|n| payroll(*n))
        .collect()
}

fn text(r: &Reader, name: &'static str) -> Option<String> {
    r.string(Attr::field(name, name)).filter(|v| !v.is_empty())
}

fn amount(r: &Reader, name: &'static str) -> Option<rust_decimal::Decimal> {
    r.raw(Attr::field(name, name)).and_then(xml::parse_decimal)
}

fn payroll(node: Node<'_, '_>) -> Payroll {
    let r = Reader::new(node, false);
    let child = |name| xml::child(node, NOMINA12, name);
    let lines = |group: &'static str, line: &'static str, kind: &'static str| {
        xml::children(node, NOMINA12, group)
            .flat_map(|g| xml::children(g, NOMINA12, line))
            .map(|n| {
                let r = Reader::new(n, false);
                PayrollLine {
                    kind: text(&r, kind),
                    key: text(&r, "Clave"),
                    concept: text(&r, "Concepto"),
                    taxed: amount(&r, "ImporteGravado"),
                    exempt: amount(&r, "ImporteExento"),
                    amount: amount(&r, "Importe"),
                }
            })
            .collect()
    };
    Payroll {
        payroll_type: text(&r, "TipoNomina"),
        paid_on: text(&r, "FechaPago"),
        period_from: text(&r, "FechaInicialPago"),
        period_to: text(&r, "FechaFinalPago"),
        days_paid: amount(&r, "NumDiasPagados"),
        total_perceptions: amount(&r, "TotalPercepciones"),
        total_deductions: amount(&r, "TotalDeducciones"),
        total_other_payments: amount(&r, "TotalOtrosPagos"),
        employer_registration: child("Emisor")
            .and_then(|n| text(&Reader::new(n, false), "RegistroPatronal")),
        employee: child("Receptor").map(employee).unwrap_or_default(),
        perceptions: lines("Percepciones", "Percepcion", "TipoPercepcion"),
        deductions: lines("Deducciones", "Deduccion", "TipoDeduccion"),
        other_payments: lines("OtrosPagos", "OtroPago", "TipoOtroPago"),
    }
}

fn employee(node: Node<'_, '_>) -> Employee {
    let r = Reader::new(node, false);
    Employee {
        curp: text(&r, "Curp"),
        social_security_number: text(&r, "NumSeguridadSocial"),
        employee_number: text(&r, "NumEmpleado"),
        started_on: text(&r, "FechaInicioRelLaboral"),
        seniority: text(&r, "Antigüedad"),
        contract_type: text(&r, "TipoContrato"),
        unionized: text(&r, "Sindicalizado"),
        workday_type: text(&r, "TipoJornada"),
        regime_type: text(&r, "TipoRegimen"),
        department: text(&r, "Departamento"),
        position: text(&r, "Puesto"),
        job_risk: text(&r, "RiesgoPuesto"),
        payment_frequency: text(&r, "PeriodicidadPago"),
        bank: text(&r, "Banco"),
        account: text(&r, "CuentaBancaria"),
        base_salary: amount(&r, "SalarioBaseCotApor"),
        integrated_daily_salary: amount(&r, "SalarioDiarioIntegrado"),
        state: text(&r, "ClaveEntFed"),
    }
}
