//! Webhook delivery: one signed POST per attempt, an attempt log, then the next attempt
//! on the retry schedule or a final `succeeded` / `failed`. A worker sends its batch
//! (`lanes::delivery_batch`) in turn, then one transaction logs every attempt and claims
//! the worker's next batch (`ClaimNext`). After a slow send the rest of the batch goes
//! back to the queue unsent and wakes the other workers to send it beside this one,
//! which takes a single delivery next.

use super::lanes::{delivery_batch, ClaimNext, Lane};
use super::outcome::{log_end, log_failure, record, record_failure, settle, Outcome};
use crate::app::Context;
use crate::db::{self, deliveries::Attempt, jobs::Job};
use rand::Rng;
use std::time::{Duration, Instant};
use ureq::unversioned::transport::DefaultConnector;

/// Builds the HTTP agent deliveries use: a per-attempt timeout, no redirects (a redirect
/// is a failed attempt), non-2xx statuses as plain responses, and with `block_private`
/// a resolver that refuses private and local addresses (`delivery_target`).
pub fn agent(timeout: Duration, block_private: bool) -> ureq::Agent {
    let mut config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent("cfdi-extract-webhooks/1");
    if block_private {
        // A proxy from the environment would resolve the name itself, past the check.
        config = config.proxy(None);
    }
    let config = config.build();
    ureq::Agent::with_parts(
        config,
        DefaultConnector::default(),
        super::delivery_target::GuardedResolver::new(block_private),
    )
}

/// A send slower than this is a slow receiver's: the rest of its batch goes to the
/// other workers.
const SLOW_SEND: Duration = Duration::from_millis(50);

/// Sends each of a worker's claimed deliveries in turn, then records them all and claims
/// the worker's next ones in one transaction; returns those.
pub(super) fn run(ctx: &Context, jobs: Vec<Job>, lane: Lane) -> Vec<Job> {
    let mut tried = Vec::with_capacity(jobs.len());
    let mut slow = false;
    for job in jobs {
        let _origin = crate::origin::enter(job.request_id.clone());
        let started = Instant::now();
        // What is left of the batch after a slow send, or when stopping, goes back to
        // the queue unsent.
        let result = (!slow && !ctx.stopping()).then(|| attempt(ctx, &job));
        if let Some(result) = &result {
            log_failure(&job, result);
            slow = started.elapsed() > SLOW_SEND;
        }
        tried.push((job, result, started.elapsed()));
    }
    let ids: Vec<i64> = tried.iter().map(|(job, ..)| job.id).collect();
    let unsent: Vec<i64> = tried
        .iter()
        .filter(|(_, result, _)| result.is_none())
        .map(|(job, ..)| job.id)
        .collect();
    let next = record(ctx, &ids, || {
        ctx.db.tx(|tx| {
            for (job, result, _) in &tried {
                match result {
                    Some(Ok(sent)) => {
                        if let Some(attempt) = &sent.attempt {
                            let attempt = Attempt {
                                number: attempt.number,
                                response_status: attempt.response_status,
                                error: attempt.error.as_deref(),
                                duration_ms: attempt.duration_ms,
                                next_attempt_at: attempt.next_attempt_at.as_deref(),
                                status: attempt.status,
                            };
                            db::deliveries::record_attempt(tx, &sent.delivery_id, &attempt)?;
                        }
                        settle(tx, job, &sent.outcome)?;
                    }
                    Some(Err(e)) => record_failure(tx, job, e)?,
                    None => {}
                }
            }
            db::jobs::release(
                tx,
                db::jobs::Kind::DeliverWebhook,
                &unsent,
                "not sent yet: the server stopped, or a slow send came before it",
            )?;
            // After a slow send, one: the released ones are the other workers'.
            ClaimNext::new(ctx, lane).claim(tx, if slow { 1 } else { delivery_batch(tx) })
        })
    });
    for (job, result, took) in &tried {
        let result = match result {
            Some(Ok(sent)) => Ok(&sent.outcome),
            Some(Err(e)) => Err(e),
            None => continue,
        };
        log_end(job, result, *took);
    }
    next
}

/// What one delivery's attempt left to record.
struct Sent {
    delivery_id: String,
    /// None when there was nothing to send (webhook deleted, delivery no longer pending).
    attempt: Option<Tried>,
    outcome: Outcome,
}

/// `db::deliveries::Attempt`, owned until the batch is recorded.
struct Tried {
    number: u32,
    response_status: u16,
    error: Option<String>,
    duration_ms: u64,
    next_attempt_at: Option<String>,
    status: &'static str,
}

/// Sends one delivery's next attempt (no transaction held).
fn attempt(ctx: &Context, job: &Job) -> anyhow::Result<Sent> {
    let nothing = || Sent {
        delivery_id: job.target_id.clone(),
        attempt: None,
        outcome: Outcome::Done,
    };
    let Some(out) = db::deliveries::outgoing(&ctx.db.conn()?, &job.target_id)? else {
        return Ok(nothing()); // webhook deleted
    };
    let token = ctx.cipher.open_token(&out.token)?;
    if out.delivery.status != "pending" {
        return Ok(nothing());
    }
    let number = out.delivery.attempts + 1;
    let started = Instant::now();
    let result = send(ctx, &out, &token);
    let duration_ms = started.elapsed().as_millis() as u64;

    let schedule = &ctx.config.webhook_retry_schedule.0;
    let (status_code, error) = match &result {
        Ok(code) if (200..300).contains(code) => (*code, None),
        Ok(code) => (*code, Some(format!("HTTP {code}"))),
        Err(e) => (0, Some(e.clone())),
    };
    let next_delay = error
        .is_some()
        .then(|| schedule.get(number as usize).copied())
        .flatten()
        .map(jitter);
    let next_at = next_delay.map(crate::time::after);
    let status = match (&error, &next_at) {
        (None, _) => "succeeded",
        (Some(_), Some(_)) => "pending",
        (Some(_), None) => "failed",
    };
    let outcome = match (next_delay, error.clone()) {
        (Some(after), Some(error)) => Outcome::Retry { after, error },
        _ => Outcome::Done,
    };
    ctx.metrics
        .observe_delivery(status, duration_ms as f64 / 1000.0);
    Ok(Sent {
        delivery_id: out.delivery.id,
        attempt: Some(Tried {
            number,
            response_status: status_code,
            error,
            duration_ms,
            next_attempt_at: next_at,
            status,
        }),
        outcome,
    })
}

/// One attempt: the status code, or a transport error's text.
fn send(ctx: &Context, out: &db::deliveries::Outgoing, token: &str) -> Result<u16, String> {
    let timestamp = chrono::Utc::now().timestamp();
    let msg_id = &out.delivery.event_id;
    let signature = crate::webhook_signing::sign(token, msg_id, timestamp, out.payload.as_bytes());
    ctx.agent
        .post(&out.url)
        .header("Authorization", &format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .header("webhook-id", msg_id)
        .header("webhook-timestamp", &timestamp.to_string())
        .header("webhook-signature", &signature)
        .send(out.payload.as_str())
        .map(|res| res.status().as_u16())
        .map_err(|e| e.to_string())
}

/// ±20% around the schedule's step, so retries of many deliveries spread out.
fn jitter(d: Duration) -> Duration {
    if d.is_zero() {
        return d;
    }
    d.mul_f64(rand::rng().random_range(0.8..=1.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_20_percent() {
        for _ in 0..100 {
            let d = jitter(Duration::from_secs(100));
            assert!(d >= Duration::from_secs(80) && d <= Duration::from_secs(120));
        }
        assert_eq!(jitter(Duration::ZERO), Duration::ZERO);
    }
}
