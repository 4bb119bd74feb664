//! SQL for `extractions`.

use super::sql::{params, Row};
use super::Conn;
use crate::domain::class::DocumentClass;
use crate::domain::extraction::{Direction, FailedReason, NewExtraction, Status, CONTRACT_CHANNEL};
use serde_json::{json, Value};

#[derive(Debug, Clone)]
pub struct Extraction {
    pub id: String,
    pub org_id: String,
    pub entity_id: String,
    pub status: Status,
    pub period_from: String,
    pub period_to: String,
    pub direction: Direction,
    pub document_class: DocumentClass,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub failed_reason: Option<String>,
    /// Decided when the run starts.
    /// The channel's name (`sat::Channel::name`) once the run started.
    pub channel: Option<String>,
    pub invoices_found: i64,
    pub invoices_processed: i64,
    pub created_at: String,
    pub updated_at: String,
    /// The schedule that started the run, if one did.
    pub schedule_id: Option<String>,
    /// Documents refused because their UUID names another stored document
    /// (`record_conflict` writes them): how many, and the first 100 by UUID as
    /// `[{uuid, reason}]`.
    pub invoices_conflicting: i64,
    pub conflicts: Value,
    /// The CFDI the run fetches by UUID (`options.uuids`); empty for a period's run.
    pub uuids: Vec<String>,
    /// Of those, the ones the SAT did not give, once the run ended.
    pub uuids_not_found: Option<Vec<String>>,
}

impl Extraction {
    pub fn view(&self) -> Value {
        let mut view = json!({
            "id": self.id, "entity_id": self.entity_id, "status": self.status.as_str(),
            "options": {
                "period": { "from": self.period_from, "to": self.period_to },
                "download_type": self.direction.as_str(),
            },
            "started_at": self.started_at, "finished_at": self.finished_at,
            "failed_reason": self.failed_reason,
            "invoices_found": self.invoices_found, "invoices_processed": self.invoices_processed,
            "created_at": self.created_at, "updated_at": self.updated_at,
        });
        // Only runs of retentions name their class: runs of invoices keep the
        // contract's exact `options`.
        if self.document_class != DocumentClass::Invoices {
            view["options"]["document_class"] = json!(self.document_class.as_str());
        }
        // Only runs of another channel than the CIEC say which: CIEC runs keep the
        // contract's exact shape.
        if let Some(channel) = self.channel.as_deref().filter(|c| *c != CONTRACT_CHANNEL) {
            view["channel"] = json!(channel);
        }
        // Likewise only scheduled runs name their schedule.
        if let Some(schedule_id) = &self.schedule_id {
            view["schedule_id"] = json!(schedule_id);
        }
        // Only runs by UUID name them, and once ended, those the SAT did not give.
        if !self.uuids.is_empty() {
            view["options"]["uuids"] = json!(self.uuids);
            if let Some(missing) = &self.uuids_not_found {
                view["uuids_not_found"] = json!(missing);
            }
        }
        // And only runs that met another document under a stored UUID list them.
        if self.invoices_conflicting > 0 {
            view["invoices_conflicting"] = json!(self.invoices_conflicting);
            view["conflicts"] = self.conflicts.clone();
        }
        view
    }

    pub fn period(&self) -> Option<crate::domain::extraction::Period> {
        let parse = |s: &str| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok();
        Some(crate::domain::extraction::Period {
            from: parse(&self.period_from)?,
            to: parse(&self.period_to)?,
        })
    }
}

super::sql::columns! {
    /// An extraction's row, as written and read.
    Id = "id",
    OrgId = "org_id",
    EntityId = "entity_id",
    State = "status",
    PeriodFrom = "period_from",
    PeriodTo = "period_to",
    DownloadType = "download_type",
    StartedAt = "started_at",
    FinishedAt = "finished_at",
    FailedReason = "failed_reason",
    InvoicesFound = "invoices_found",
    InvoicesProcessed = "invoices_processed",
    CreatedAt = "created_at",
    UpdatedAt = "updated_at",
    Channel = "channel",
    ScheduleId = "schedule_id",
    Class = "document_class",
    Uuids = "uuids",
    UuidsNotFound = "uuids_not_found",
}

/// Read after `COLUMNS` (from column `WIDTH`): the run's conflicts, a count, then a JSON array
/// (PostgreSQL's aggregate of no rows is NULL, SQLite's `[]`: the coalesce is for it).
const CONFLICTS: &str =
    "(SELECT count(*) FROM extraction_conflicts c WHERE c.extraction_id = extractions.id),
    coalesce((SELECT json_group_array(json_object('uuid', uuid, 'reason', reason)) FROM
        (SELECT uuid, reason FROM extraction_conflicts c WHERE c.extraction_id = extractions.id
         ORDER BY uuid LIMIT 100) c), json('[]'))";

fn from_row(r: &Row) -> anyhow::Result<Extraction> {
    let bad = |c: Col, s: String| anyhow::anyhow!("column {c:?} holds an unknown value {s:?}");
    let status: String = r.get(Col::State.at())?;
    let direction: String = r.get(Col::DownloadType.at())?;
    let class: String = r.get(Col::Class.at())?;
    let (conflicting, conflicts) = (WIDTH, WIDTH + 1);
    Ok(Extraction {
        id: r.get(Col::Id.at())?,
        org_id: r.get(Col::OrgId.at())?,
        entity_id: r.get(Col::EntityId.at())?,
        status: Status::parse(&status).ok_or_else(|| bad(Col::State, status.clone()))?,
        period_from: r.get(Col::PeriodFrom.at())?,
        period_to: r.get(Col::PeriodTo.at())?,
        direction: Direction::parse(&direction)
            .ok_or_else(|| bad(Col::DownloadType, direction.clone()))?,
        started_at: r.get(Col::StartedAt.at())?,
        finished_at: r.get(Col::FinishedAt.at())?,
        failed_reason: r.get(Col::FailedReason.at())?,
        invoices_found: r.get(Col::InvoicesFound.at())?,
        invoices_processed: r.get(Col::InvoicesProcessed.at())?,
        created_at: r.get(Col::CreatedAt.at())?,
        updated_at: r.get(Col::UpdatedAt.at())?,
        channel: r.get(Col::Channel.at())?,
        schedule_id: r.get(Col::ScheduleId.at())?,
        document_class: DocumentClass::parse(&class)
            .ok_or_else(|| bad(Col::Class, class.clone()))?,
        invoices_conflicting: r.get(conflicting)?,
        conflicts: serde_json::from_str(&r.get::<String>(conflicts)?).unwrap_or_default(),
        uuids: match r.get::<Option<String>>(Col::Uuids.at())? {
            Some(json) => serde_json::from_str(&json)?,
            None => Vec::new(),
        },
        uuids_not_found: r
            .get::<Option<String>>(Col::UuidsNotFound.at())?
            .map(|json| serde_json::from_str(&json))
            .transpose()?,
    })
}

/// Adds to a run's counts of invoices found (listed) and processed (stored).
pub fn add_counts(conn: &Conn, id: &str, found: i64, processed: i64) -> anyhow::Result<()> {
    conn.defer(
        "UPDATE extractions SET invoices_found = invoices_found + ?2,
            invoices_processed = invoices_processed + ?3, updated_at = ?4 WHERE id = ?1",
        params![id, found, processed, crate::time::now()],
    )?;
    Ok(())
}

/// A run that lists its period again counts what it finds from zero.
pub fn reset_found(conn: &Conn, id: &str) -> anyhow::Result<()> {
    conn.defer(
        "UPDATE extractions SET invoices_found = 0 WHERE id = ?1",
        params![id],
    )?;
    Ok(())
}

/// Records a document the run refused because its UUID names another stored document.
pub fn record_conflict(
    conn: &Conn,
    extraction_id: &str,
    uuid: &str,
    reason: &str,
) -> anyhow::Result<()> {
    conn.defer(
        "INSERT INTO extraction_conflicts (extraction_id, uuid, reason) VALUES (?1, ?2, ?3)
         ON CONFLICT (extraction_id, uuid) DO UPDATE SET reason = excluded.reason",
        params![extraction_id, uuid, reason],
    )?;
    Ok(())
}

/// A new pending run; `schedule_id` names the schedule that starts it.
pub fn insert(
    conn: &Conn,
    org_id: &str,
    new: &NewExtraction,
    schedule_id: Option<&str>,
) -> anyhow::Result<Extraction> {
    let now = crate::time::now();
    let e = Extraction {
        id: uuid::Uuid::now_v7().to_string(),
        org_id: org_id.to_string(),
        entity_id: new.entity_id.clone(),
        status: Status::Pending,
        period_from: new.period.from.format("%Y-%m-%d").to_string(),
        period_to: new.period.to.format("%Y-%m-%d").to_string(),
        direction: new.direction,
        document_class: new.document_class,
        started_at: None,
        finished_at: None,
        failed_reason: None,
        channel: None,
        invoices_found: 0,
        invoices_processed: 0,
        created_at: now.clone(),
        updated_at: now,
        schedule_id: schedule_id.map(str::to_string),
        invoices_conflicting: 0,
        conflicts: Value::Null,
        uuids: new.uuids.clone(),
        uuids_not_found: None,
    };
    let uuids = match e.uuids.is_empty() {
        true => None,
        false => Some(serde_json::to_string(&e.uuids)?),
    };
    conn.defer(
        &format!("INSERT INTO extractions ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, NULL)"),
        params![
            e.id, e.org_id, e.entity_id, e.status.as_str(), e.period_from, e.period_to, e.direction.as_str(),
            e.started_at, e.finished_at, e.failed_reason, e.invoices_found, e.invoices_processed, e.created_at, e.updated_at,
            e.channel.as_deref(), e.schedule_id, e.document_class.as_str(), uuids
        ],
    )?;
    Ok(e)
}

pub fn get(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<Extraction>> {
    conn.opt(
        &format!("SELECT {COLUMNS}, {CONFLICTS} FROM extractions WHERE id = ?1 AND org_id = ?2"),
        params![id, org_id],
        from_row,
    )
}

pub fn get_any(conn: &Conn, id: &str) -> anyhow::Result<Option<Extraction>> {
    conn.opt(
        &format!("SELECT {COLUMNS}, {CONFLICTS} FROM extractions WHERE id = ?1"),
        params![id],
        from_row,
    )
}

pub fn list(
    conn: &Conn,
    org_id: &str,
    entity_id: Option<&str>,
    status: Option<&str>,
    after: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<Extraction>> {
    conn.all(
        &format!(
            "SELECT {COLUMNS}, {CONFLICTS} FROM extractions WHERE org_id = ?1 AND (?2 IS NULL OR entity_id = ?2)
           AND (?3 IS NULL OR status = ?3) AND (?4 IS NULL OR id < ?4)
         ORDER BY id DESC LIMIT ?5"
        ),
        params![org_id, entity_id, status, after, limit],
        from_row,
    )
}

/// One entity's extractions run one at a time, in creation order.
pub fn serial_key(entity_id: &str) -> String {
    format!("entity:{entity_id}")
}

/// Inserts a pending run and queues its job: what `POST /v1/extractions` and a
/// schedule's slot both do.
pub fn queue(
    tx: &super::Tx,
    org_id: &str,
    new: &NewExtraction,
    schedule_id: Option<&str>,
) -> anyhow::Result<Extraction> {
    let e = insert(tx, org_id, new, schedule_id)?;
    super::jobs::enqueue(
        tx,
        super::jobs::Kind::RunExtraction,
        &e.id,
        Some(&serial_key(&e.entity_id)),
        &crate::time::now(),
    )?;
    Ok(e)
}

/// Whether a run of this schedule is still pending or running.
pub fn schedule_has_open_run(conn: &Conn, schedule_id: &str) -> anyhow::Result<bool> {
    conn.one(
        "SELECT EXISTS (SELECT 1 FROM extractions WHERE schedule_id = ?1
           AND status IN ('pending', 'running'))",
        params![schedule_id],
        |r| r.get(0),
    )
}

/// Writes status, timestamps, reason, counters and the UUIDs not found back.
pub fn update(conn: &Conn, e: &Extraction) -> anyhow::Result<()> {
    let not_found = e
        .uuids_not_found
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?;
    conn.defer(
        "UPDATE extractions SET status = ?2, started_at = ?3, finished_at = ?4, failed_reason = ?5,
            invoices_found = ?6, invoices_processed = ?7, updated_at = ?8, channel = ?9,
            uuids_not_found = ?10 WHERE id = ?1",
        params![
            e.id,
            e.status.as_str(),
            e.started_at,
            e.finished_at,
            e.failed_reason,
            e.invoices_found,
            e.invoices_processed,
            e.updated_at,
            e.channel.as_deref(),
            not_found
        ],
    )?;
    Ok(())
}

/// Of `uuids`, those the entity has no processed invoice under (what a run by UUID did
/// not get), in the order given.
pub fn uuids_not_stored(
    conn: &Conn,
    entity_id: &str,
    uuids: &[String],
) -> anyhow::Result<Vec<String>> {
    let mut missing = Vec::new();
    for uuid in uuids {
        let stored: bool = conn.one(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM invoices WHERE {})",
                super::invoices::PROCESSED_BY_UUID
            ),
            params![entity_id, uuid],
            |r| r.get(0),
        )?;
        if !stored {
            missing.push(uuid.clone());
        }
    }
    Ok(missing)
}

impl Extraction {
    /// Moves to `failed` with a reason (finished_at set; started_at untouched).
    pub fn fail(&mut self, reason: FailedReason) {
        let now = crate::time::now();
        self.status = Status::Failed;
        self.failed_reason = Some(reason.as_str().to_string());
        self.finished_at = Some(now.clone());
        self.updated_at = now;
    }
}
