//! SQL for `sat_requests` and `sat_packages`: the e.firma channel's durable
//! conversation with the SAT's bulk-download service (see `sat::efirma::requests`). Reached only
//! by the job that owns the extraction, and by views of extractions already scoped to
//! their organization.

use super::sql::{params, Row};
use super::Conn;
use crate::domain::extraction::Direction;
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Metadata,
    Cfdi,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Metadata => "metadata",
            Kind::Cfdi => "cfdi",
        }
    }

    fn parse(s: &str) -> Kind {
        if s == "cfdi" {
            Kind::Cfdi
        } else {
            Kind::Metadata
        }
    }
}

/// Where a request stands on our side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// To be asked (again, after an expiry or a lost answer).
    New,
    /// Asked; the SAT is preparing it.
    Submitted,
    /// Finished at the SAT: its packages are being downloaded and stored.
    Downloading,
    Done,
    /// Over the SAT's maximum: replaced by two requests for its halves.
    Split,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::New => "new",
            State::Submitted => "submitted",
            State::Downloading => "downloading",
            State::Done => "done",
            State::Split => "split",
        }
    }

    fn parse(s: &str) -> State {
        match s {
            "submitted" => State::Submitted,
            "downloading" => State::Downloading,
            "done" => State::Done,
            "split" => State::Split,
            _ => State::New,
        }
    }

    pub fn is_final(self) -> bool {
        matches!(self, State::Done | State::Split)
    }
}

#[derive(Debug, Clone)]
pub struct SatRequest {
    pub id: String,
    pub extraction_id: String,
    pub entity_id: String,
    pub kind: Kind,
    pub direction: Direction,
    /// Mexico City local time, `YYYY-MM-DDTHH:MM:SS`.
    pub window_start: String,
    pub window_end: String,
    pub state: State,
    pub sat_request_id: Option<String>,
    pub sat_state: Option<u32>,
    pub cfdi_count: Option<i64>,
    pub checks: u32,
    pub remade: u32,
    pub next_check_at: Option<String>,
    pub last_code: Option<u32>,
    pub last_message: Option<String>,
    /// A CFDI request for one invoice by UUID (`SolicitaDescargaFolio`); its window is
    /// the run's period, for the view only. None: a request by window.
    pub folio: Option<String>,
}

impl SatRequest {
    pub fn new(
        extraction_id: &str,
        entity_id: &str,
        kind: Kind,
        direction: Direction,
        window: (&str, &str),
    ) -> SatRequest {
        SatRequest {
            id: uuid::Uuid::now_v7().to_string(),
            extraction_id: extraction_id.to_string(),
            entity_id: entity_id.to_string(),
            kind,
            direction,
            window_start: window.0.to_string(),
            window_end: window.1.to_string(),
            state: State::New,
            sat_request_id: None,
            sat_state: None,
            cfdi_count: None,
            checks: 0,
            remade: 0,
            next_check_at: None,
            last_code: None,
            last_message: None,
            folio: None,
        }
    }

    /// What an extraction shows while it waits on this request.
    pub fn view(&self) -> Value {
        let mut view = json!({
            "kind": self.kind.as_str(),
            "window": { "from": self.window_start, "to": self.window_end },
            "state": self.state.as_str(),
            "sat_request_id": self.sat_request_id,
            "checks": self.checks,
            "next_check_at": self.next_check_at,
            "sat_code": self.last_code,
            "sat_message": self.last_message,
        });
        if let Some(folio) = &self.folio {
            view["uuid"] = json!(folio);
        }
        view
    }
}

const COLUMNS: &str = "id, extraction_id, entity_id, kind, direction, window_start, window_end,
    state, sat_request_id, sat_state, cfdi_count, checks, remade, next_check_at, last_code,
    last_message, folio";

fn from_row(r: &Row) -> anyhow::Result<SatRequest> {
    let count = |i: usize| -> anyhow::Result<u32> { Ok(u32::try_from(r.get::<i64>(i)?)?) };
    let code = |i: usize| -> anyhow::Result<Option<u32>> {
        Ok(r.get::<Option<i64>>(i)?.map(u32::try_from).transpose()?)
    };
    let kind: String = r.get(3)?;
    let direction: String = r.get(4)?;
    let state: String = r.get(7)?;
    Ok(SatRequest {
        id: r.get(0)?,
        extraction_id: r.get(1)?,
        entity_id: r.get(2)?,
        kind: Kind::parse(&kind),
        direction: Direction::parse(&direction).unwrap_or(Direction::Issued),
        window_start: r.get(5)?,
        window_end: r.get(6)?,
        state: State::parse(&state),
        sat_request_id: r.get(8)?,
        sat_state: code(9)?,
        cfdi_count: r.get(10)?,
        checks: count(11)?,
        remade: count(12)?,
        next_check_at: r.get(13)?,
        last_code: code(14)?,
        last_message: r.get(15)?,
        folio: r.get(16)?,
    })
}

/// Inserts or writes back a request.
pub fn save(conn: &Conn, q: &SatRequest) -> anyhow::Result<()> {
    let now = crate::time::now();
    conn.exec(
        &format!(
            "INSERT INTO sat_requests ({COLUMNS}, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?18)
         ON CONFLICT (id) DO UPDATE SET state = excluded.state,
            sat_request_id = excluded.sat_request_id, sat_state = excluded.sat_state,
            cfdi_count = excluded.cfdi_count, checks = excluded.checks, remade = excluded.remade,
            next_check_at = excluded.next_check_at, last_code = excluded.last_code,
            last_message = excluded.last_message, updated_at = excluded.updated_at"
        ),
        params![
            q.id,
            q.extraction_id,
            q.entity_id,
            q.kind.as_str(),
            q.direction.as_str(),
            q.window_start,
            q.window_end,
            q.state.as_str(),
            q.sat_request_id,
            q.sat_state.map(i64::from),
            q.cfdi_count,
            i64::from(q.checks),
            i64::from(q.remade),
            q.next_check_at,
            q.last_code.map(i64::from),
            q.last_message,
            q.folio,
            now
        ],
    )?;
    Ok(())
}

/// An extraction's requests, in the order they were made.
pub fn of_extraction(conn: &Conn, extraction_id: &str) -> anyhow::Result<Vec<SatRequest>> {
    conn.all(
        &format!(
            "SELECT {COLUMNS} FROM sat_requests WHERE extraction_id = ?1 ORDER BY created_at, id"
        ),
        params![extraction_id],
        from_row,
    )
}

/// A live request of the entity's (made by any extraction of the same document class)
/// with the same parameters:
/// what a duplicate answer (5005) refers to.
pub fn live_twin(conn: &Conn, q: &SatRequest) -> anyhow::Result<Option<String>> {
    conn.opt(
        "SELECT sat_request_id FROM sat_requests
             WHERE entity_id = ?1 AND kind = ?2 AND direction = ?3 AND window_start = ?4
               AND window_end = ?5 AND id <> ?6 AND sat_request_id IS NOT NULL
               AND folio IS NOT DISTINCT FROM ?8
               AND state IN ('submitted', 'downloading')
               -- The retentions' hosts know other requests than the invoices' ones.
               AND (SELECT document_class FROM extractions WHERE id = extraction_id)
                   IS NOT DISTINCT FROM (SELECT document_class FROM extractions WHERE id = ?7)
             ORDER BY created_at DESC LIMIT 1",
        params![
            q.entity_id,
            q.kind.as_str(),
            q.direction.as_str(),
            q.window_start,
            q.window_end,
            q.id,
            q.extraction_id,
            q.folio
        ],
        |r| r.get(0),
    )
}

/// The request an extraction is waiting on (the next to be checked), for its view.
pub fn waiting_view(conn: &Conn, extraction_id: &str) -> anyhow::Result<Option<Value>> {
    Ok(of_extraction(conn, extraction_id)?
        .into_iter()
        .filter(|q| matches!(q.state, State::New | State::Submitted))
        .min_by(|a, b| a.next_check_at.cmp(&b.next_check_at))
        .map(|q| q.view()))
}

/// A finished request's packages, in the SAT's order.
#[derive(Debug, Clone)]
pub struct SatPackage {
    pub package_id: String,
    pub downloads: u32,
    /// Rows (metadata) or files (CFDI) already stored: a package read again after a
    /// crash skips them, so counts stay exact.
    pub items_done: u64,
    pub done: bool,
}

pub fn add_packages(conn: &Conn, request_id: &str, ids: &[String]) -> anyhow::Result<()> {
    for (seq, id) in ids.iter().enumerate() {
        conn.exec(
            "INSERT INTO sat_packages (request_id, package_id, seq) VALUES (?1, ?2, ?3)
             ON CONFLICT DO NOTHING",
            params![request_id, id, seq as i64],
        )?;
    }
    Ok(())
}

pub fn packages(conn: &Conn, request_id: &str) -> anyhow::Result<Vec<SatPackage>> {
    conn.all(
        "SELECT package_id, downloads, items_done, done FROM sat_packages
         WHERE request_id = ?1 ORDER BY seq",
        params![request_id],
        |r| {
            Ok(SatPackage {
                package_id: r.get(0)?,
                downloads: u32::try_from(r.get::<i64>(1)?)?,
                items_done: r.get::<i64>(2)?.max(0) as u64,
                done: r.get(3)?,
            })
        },
    )
}

/// Counts a download before it is made: the SAT allows two per package, so one cut
/// short by a crash still counts.
pub fn count_download(conn: &Conn, request_id: &str, package_id: &str) -> anyhow::Result<()> {
    conn.exec(
        "UPDATE sat_packages SET downloads = downloads + 1 WHERE request_id = ?1 AND package_id = ?2",
        params![request_id, package_id],
    )?;
    Ok(())
}

/// Records how far a package's storing got, and whether it is complete.
pub fn package_progress(
    conn: &Conn,
    request_id: &str,
    package_id: &str,
    items_done: u64,
    done: bool,
) -> anyhow::Result<()> {
    conn.exec(
        "UPDATE sat_packages SET items_done = ?3, done = ?4 WHERE request_id = ?1 AND package_id = ?2",
        params![request_id, package_id, items_done as i64, done],
    )?;
    Ok(())
}

/// Forgets a request's packages (it is being asked again: new packages will come).
pub fn drop_packages(conn: &Conn, request_id: &str) -> anyhow::Result<()> {
    conn.exec(
        "DELETE FROM sat_packages WHERE request_id = ?1",
        params![request_id],
    )?;
    Ok(())
}
