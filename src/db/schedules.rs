//! SQL for `schedules`. Every query is scoped by `org_id` except the scheduler's own.

use super::sql::{params, Row};
use super::Conn;
use crate::domain::extraction::Direction;
use crate::domain::schedule::{NewSchedule, Timing, TIME_ZONE};
use chrono::NaiveTime;
use serde_json::{json, Value};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Schedule {
    pub id: String,
    pub org_id: String,
    pub entity_id: String,
    pub directions: Vec<Direction>,
    pub timing: Timing,
    pub lookback_days: i64,
    pub active: bool,
    pub paused_reason: Option<String>,
    pub next_run_at: String,
    pub last_run_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl Schedule {
    pub fn view(&self) -> Value {
        let directions: Vec<&str> = self.directions.iter().map(|d| d.as_str()).collect();
        json!({
            "id": self.id, "entity_id": self.entity_id, "directions": directions,
            "every": self.timing.every_text(), "daily_at": self.timing.daily_at_text(),
            "time_zone": TIME_ZONE.name(), "lookback_days": self.lookback_days,
            "status": if self.active { "active" } else { "paused" },
            "paused_reason": self.paused_reason,
            "next_run_at": self.next_run_at, "last_run_at": self.last_run_at,
            "created_at": self.created_at, "updated_at": self.updated_at,
        })
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
    status, paused_reason, next_run_at, last_run_at, created_at, updated_at";

fn from_row(r: &Row) -> anyhow::Result<Schedule> {
    let bad = |i: usize, s: String| anyhow::anyhow!("invalid schedule column {i}: {s}");
    let directions: String = r.get(3)?;
    let every: Option<i64> = r.get(4)?;
    let daily_at: Option<String> = r.get(5)?;
    let timing = match (every, daily_at) {
        (Some(secs), _) => Timing::Every(Duration::from_secs(secs.max(1) as u64)),
        (None, Some(at)) => Timing::DailyAt(
            NaiveTime::parse_from_str(&at, "%H:%M").map_err(|_| bad(5, at.clone()))?,
        ),
        (None, None) => return Err(bad(4, "no timing".into())),
    };
    let names: Vec<String> =
        serde_json::from_str(&directions).map_err(|_| bad(3, directions.clone()))?;
    Ok(Schedule {
        id: r.get(0)?,
        org_id: r.get(1)?,
        entity_id: r.get(2)?,
        directions: names.iter().filter_map(|d| Direction::parse(d)).collect(),
        timing,
        lookback_days: r.get(6)?,
        active: r.get::<String>(7)? == "active",
        paused_reason: r.get(8)?,
        next_run_at: r.get(9)?,
        last_run_at: r.get(10)?,
        created_at: r.get(11)?,
        updated_at: r.get(12)?,
    })
}

fn timing_columns(timing: &Timing) -> (Option<i64>, Option<String>) {
    match timing {
        Timing::Every(d) => (Some(d.as_secs() as i64), None),
        Timing::DailyAt(_) => (None, timing.daily_at_text()),
    }
}

/// A new active schedule: an interval runs at the next tick, a daily time at its next slot.
pub fn insert(conn: &Conn, org_id: &str, new: &NewSchedule) -> anyhow::Result<Schedule> {
    let now = chrono::Utc::now();
    let next_run_at = match new.timing {
        Timing::Every(_) => now,
        Timing::DailyAt(_) => new.timing.next_after(now),
    };
    let s = Schedule {
        id: uuid::Uuid::now_v7().to_string(),
        org_id: org_id.to_string(),
        entity_id: new.entity_id.clone(),
        directions: new.directions.clone(),
        timing: new.timing,
        lookback_days: new.lookback_days,
        active: true,
        paused_reason: None,
        next_run_at: crate::time::format(next_run_at),
        last_run_at: None,
        created_at: crate::time::format(now),
        updated_at: crate::time::format(now),
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
    let (every, daily_at) = timing_columns(&s.timing);
    let directions: Vec<&str> = s.directions.iter().map(|d| d.as_str()).collect();
    conn.exec(
        "UPDATE schedules SET directions = ?2, every_seconds = ?3, daily_at = ?4,
            lookback_days = ?5, status = ?6, paused_reason = ?7, next_run_at = ?8,
            last_run_at = ?9, updated_at = ?10 WHERE id = ?1",
        params![
            s.id,
            serde_json::to_string(&directions)?,
            every,
            daily_at,
            s.lookback_days,
            if s.active { "active" } else { "paused" },
            s.paused_reason,
            s.next_run_at,
            s.last_run_at,
            s.updated_at
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

pub fn exists_for_entity(conn: &Conn, entity_id: &str) -> anyhow::Result<bool> {
    conn.one(
        "SELECT EXISTS (SELECT 1 FROM schedules WHERE entity_id = ?1)",
        params![entity_id],
        |r| r.get(0),
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
