//! Webhook delivery: one signed POST per attempt, an attempt log, then the next attempt
//! on the retry schedule or a final `succeeded` / `failed`. The transaction that logs
//! the attempt also claims the worker's next delivery (`settle_and_claim`).

use super::lanes::{settle_and_claim, ClaimNext, Lane};
use super::outcome::Outcome;
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

pub(super) fn run(ctx: &Context, job: &Job, lane: Lane) -> anyhow::Result<Outcome> {
    let Some(out) = db::deliveries::outgoing(&*ctx.db.conn()?, &job.target_id)? else {
        return Ok(Outcome::Done); // webhook deleted
    };
    let token = ctx.cipher.open_token(&out.token)?;
    if out.delivery.status != "pending" {
        return Ok(Outcome::Done);
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
    let next = ctx.db.tx(|tx| {
        db::deliveries::record_attempt(
            tx,
            &out.delivery.id,
            &Attempt {
                number,
                response_status: status_code,
                error: error.as_deref(),
                duration_ms,
                next_attempt_at: next_at.as_deref(),
                status,
            },
        )?;
        settle_and_claim(tx, job, &outcome, ClaimNext::new(ctx, lane))
    })?;
    Ok(Outcome::Settled(next))
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
