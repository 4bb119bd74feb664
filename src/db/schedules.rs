//! SQL for `schedules`. Every query is scoped by `org_id` except the scheduler's own.

use super::sql::{params, Row};
use super::Conn;
use crate::domain::class::DocumentClass;
use crate::domain::extraction::Direction;
use crate::domain::schedule::{NewSchedule, Plan, Span, Timing, TIME_ZONE};
use chrono::{DateTime, NaiveTime, Utc};
use serde_json::{json, Value};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Schedule {
    pub id: String,
    pub org_id: String,
    pub entity_id: String,
    pub plan: Plan,
    pub active: bool,
    pub paused_reason: Option<String>,
    pub next_run_at: String,
    pub last_run_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl Schedule {
    /// The schedule as the API shows it: `monthly` only on monthly schedules, and
    /// `document_classes` only when they are not the default (invoices), so interval
    /// and daily schedules keep their documented shape.
    pub fn view(&self) -> Value {
        let plan = &self.plan;
        let directions: Vec<&str> = plan.directions.iter().map(|d| d.as_str()).collect();
        let lookback_days = match plan.span {
            Span::Days(days) => Some(days),
            Span::Months(_) => None,
        };
        let mut view = json!({
            "id": self.id, "entity_id": self.entity_id, "directions": directions,
            "every": plan.timing.every_text(), "daily_at": plan.timing.daily_at_text(),
            "time_zone": TIME_ZONE.name(), "lookback_days": lookback_days,
            "status": if self.active { "active" } else { "paused" },
            "paused_reason": self.paused_reason,
            "next_run_at": self.next_run_at, "last_run_at": self.last_run_at,
            "created_at": self.created_at, "updated_at": self.updated_at,
        });
        if let (Timing::Monthly { day, at }, Span::Months(before)) = (plan.timing, plan.span) {
            view["monthly"] = json!({
                "day": day, "at": at.format("%H:%M").to_string(), "months_before": before,
            });
        }
        if plan.classes != [DocumentClass::Invoices] {
            let classes: Vec<&str> = plan.classes.iter().map(|c| c.as_str()).collect();
            view["document_classes"] = json!(classes);
        }
        view
    }

    /// Pauses with a reason (`domain::schedule::PAUSED_*`).
    pub fn pause(&mut self, reason: &str) {
        self.active = false;
        self.paused_reason = Some(reason.to_string());
        self.updated_at = crate::time::now();
    }

    /// Active again at `now`; a slot missed while paused is due at once (and runs once).
    pub fn resume(&mut self, now: &str) {
        self.active = true;
        self.paused_reason = None;
        if self.next_run_at.as_str() < now {
            self.next_run_at = now.to_string();
        }
        self.updated_at = now.to_string();
    }
}

const COLUMNS: &str = "id, org_id, entity_id, directions, every_seconds, daily_at, lookback_days,
    status, paused_reason, next_run_at, last_run_at, created_at, updated_at, monthly_day,
    monthly_at, months_before, document_classes";

fn from_row(r: &Row) -> anyhow::Result<Schedule> {
    let bad = |i: usize, s: String| anyhow::anyhow!("invalid schedule column {i}: {s}");
    let time = |i: usize, at: String| {
        NaiveTime::parse_from_str(&at, "%H:%M").map_err(|_| bad(i, at.clone()))
    };
    let directions: String = r.get(3)?;
    let every: Option<i64> = r.get(4)?;
    let daily_at: Option<String> = r.get(5)?;
    let monthly: (Option<i64>, Option<String>) = (r.get(13)?, r.get(14)?);
    let timing = match (every, daily_at, monthly) {
        (Some(secs), _, _) => Timing::Every(Duration::from_secs(secs.max(1) as u64)),
        (None, Some(at), _) => Timing::DailyAt(time(5, at)?),
        (None, None, (Some(day), Some(at))) => Timing::Monthly {
            day: u32::try_from(day).map_err(|_| bad(13, day.to_string()))?,
            at: time(14, at)?,
        },
        _ => return Err(bad(4, "no timing".into())),
    };
    let span = match r.get::<Option<i64>>(15)? {
        Some(months) if timing.is_monthly() => {
            Span::Months(u32::try_from(months).map_err(|_| bad(15, months.to_string()))?)
        }
        _ => Span::Days(r.get(6)?),
    };
    let names: Vec<String> =
        serde_json::from_str(&directions).map_err(|_| bad(3, directions.clone()))?;
    // NULL: a schedule from before the column, which extracted invoices only.
    let classes: Vec<DocumentClass> = match r.get::<Option<String>>(16)? {
        Some(text) => {
            let names: Vec<String> =
                serde_json::from_str(&text).map_err(|_| bad(16, text.clone()))?;
            names
                .iter()
                .filter_map(|c| DocumentClass::parse(c))
                .collect()
        }
        None => vec![DocumentClass::Invoices],
    };
    Ok(Schedule {
        id: r.get(0)?,
        org_id: r.get(1)?,
        entity_id: r.get(2)?,
        plan: Plan {
            directions: names.iter().filter_map(|d| Direction::parse(d)).collect(),
            classes,
            timing,
            span,
        },
        active: r.get::<String>(7)? == "active",
        paused_reason: r.get(8)?,
        next_run_at: r.get(9)?,
        last_run_at: r.get(10)?,
        created_at: r.get(11)?,
        updated_at: r.get(12)?,
    })
}

/// A new active schedule at `now` (the scheduler's clock): an interval runs at the next
/// tick, a daily or monthly time at its next slot.
pub fn insert(
    conn: &Conn,
    org_id: &str,
    new: &NewSchedule,
    now: DateTime<Utc>,
) -> anyhow::Result<Schedule> {
    let next_run_at = match new.plan.timing {
        Timing::Every(_) => now,
        timing => timing.next_after(now),
    };
    let s = Schedule {
        id: uuid::Uuid::now_v7().to_string(),
        org_id: org_id.to_string(),
        entity_id: new.entity_id.clone(),
        plan: new.plan.clone(),
        active: true,
        paused_reason: None,
        next_run_at: crate::time::format(next_run_at),
        last_run_at: None,
        created_at: crate::time::now(),
        updated_at: crate::time::now(),
    };
    // The row's identity first; every other column is what `update` writes.
    conn.exec(
        "INSERT INTO schedules (id, org_id, entity_id, directions, lookback_days, status,
            next_run_at, created_at, updated_at)
         VALUES (?1, ?2, ?3, '[]', 0, 'active', '', ?4, ?4)",
        params![s.id, s.org_id, s.entity_id, s.created_at],
    )?;
    update(conn, &s)?;
    Ok(s)
}

/// Writes every mutable field back.
pub fn update(conn: &Conn, s: &Schedule) -> anyhow::Result<()> {
    let plan = &s.plan;
    let (every, daily_at, monthly_day, monthly_at) = match plan.timing {
        Timing::Every(d) => (Some(d.as_secs() as i64), None, None, None),
        Timing::DailyAt(_) => (None, plan.timing.daily_at_text(), None, None),
        Timing::Monthly { day, at } => (
            None,
            None,
            Some(i64::from(day)),
            Some(at.format("%H:%M").to_string()),
        ),
    };
    let (lookback_days, months_before) = match plan.span {
        Span::Days(days) => (days, None),
        Span::Months(months) => (0, Some(i64::from(months))),
    };
    let directions: Vec<&str> = plan.directions.iter().map(|d| d.as_str()).collect();
    let classes: Vec<&str> = plan.classes.iter().map(|c| c.as_str()).collect();
    conn.exec(
        "UPDATE schedules SET directions = ?2, every_seconds = ?3, daily_at = ?4,
            lookback_days = ?5, status = ?6, paused_reason = ?7, next_run_at = ?8,
            last_run_at = ?9, updated_at = ?10, monthly_day = ?11, monthly_at = ?12,
            months_before = ?13, document_classes = ?14 WHERE id = ?1",
        params![
            s.id,
            serde_json::to_string(&directions)?,
            every,
            daily_at,
            lookback_days,
            if s.active { "active" } else { "paused" },
            s.paused_reason,
            s.next_run_at,
            s.last_run_at,
            s.updated_at,
            monthly_day,
            monthly_at,
            months_before,
            serde_json::to_string(&classes)?
        ],
    )?;
    Ok(())
}

pub fn get(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<Schedule>> {
    conn.opt(
        &format!("SELECT {COLUMNS} FROM schedules WHERE id = ?1 AND org_id = ?2"),
        params![id, org_id],
        from_row,
    )
}

/// The entity's schedules (a handful: one per slot and run at most).
pub fn of_entity(conn: &Conn, entity_id: &str) -> anyhow::Result<Vec<Schedule>> {
    conn.all(
        &format!("SELECT {COLUMNS} FROM schedules WHERE entity_id = ?1 ORDER BY id"),
        params![entity_id],
        from_row,
    )
}

/// Newest first, keyset-paginated on id.
pub fn list(
    conn: &Conn,
    org_id: &str,
    entity_id: Option<&str>,
    after: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<Schedule>> {
    conn.all(
        &format!(
            "SELECT {COLUMNS} FROM schedules WHERE org_id = ?1 AND (?2 IS NULL OR entity_id = ?2)
           AND (?3 IS NULL OR id < ?3) ORDER BY id DESC LIMIT ?4"
        ),
        params![org_id, entity_id, after, limit],
        from_row,
    )
}

pub fn delete(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<bool> {
    Ok(conn.exec(
        "DELETE FROM schedules WHERE id = ?1 AND org_id = ?2",
        params![id, org_id],
    )? == 1)
}

/// The scheduler's reads: active schedules due at `now`.
pub fn due(conn: &Conn, now: &str) -> anyhow::Result<Vec<Schedule>> {
    conn.all(
        &format!(
            "SELECT {COLUMNS} FROM schedules WHERE status = 'active' AND next_run_at <= ?1
         ORDER BY next_run_at"
        ),
        params![now],
        from_row,
    )
}

/// Active schedules whose entity's CIEC is invalid, and schedules paused for that reason
/// whose entity's CIEC is not: the candidates to pause or resume (the caller also
/// weighs the e.firma).
pub fn credential_changes(conn: &Conn) -> anyhow::Result<Vec<Schedule>> {
    let own = COLUMNS
        .split(',')
        .map(|c| format!("s.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ");
    conn.all(
        &format!(
            "SELECT {own} FROM schedules s JOIN entities e ON e.id = s.entity_id
         WHERE (s.status = 'active' AND e.credential_status = 'invalid')
            OR (s.status = 'paused' AND s.paused_reason = ?1)"
        ),
        params![crate::domain::schedule::PAUSED_INVALID_CREDENTIALS],
        from_row,
    )
}
