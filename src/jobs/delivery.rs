//! Webhook delivery: one signed POST per attempt, an attempt log, then the next attempt
//! on the retry schedule or a final `succeeded` / `failed`.

use super::{Context, Outcome};
use crate::db::{self, deliveries::Attempt, jobs::Job};
use rand::Rng;
use std::net::{IpAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Builds the HTTP agent deliveries use: a per-attempt timeout, no redirects (a redirect
/// is a failed attempt), and non-2xx statuses as plain responses.
pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent("cfdi-extract-webhooks/1")
        .build()
        .into()
}

pub fn run(ctx: &Context, job: &Job) -> anyhow::Result<Outcome> {
    let Some(out) = db::deliveries::outgoing(&*ctx.db.conn()?, &ctx.cipher, &job.target_id)? else {
        return Ok(Outcome::Done); // webhook deleted
    };
    if out.delivery.status != "pending" {
        return Ok(Outcome::Done);
    }
    let number = out.delivery.attempts + 1;
    let started = Instant::now();
    let result = send(ctx, &out);
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
    ctx.db.tx(|tx| {
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
        super::settle(tx, job, &outcome)
    })?;
    Ok(Outcome::Settled)
}

/// One attempt: the status code, or a transport error's text.
fn send(ctx: &Context, out: &db::deliveries::Outgoing) -> Result<u16, String> {
    if ctx.config.webhook_block_private {
        refuse_private(&out.url)?;
    }
    let timestamp = chrono::Utc::now().timestamp();
    let msg_id = &out.delivery.event_id;
    let signature =
        crate::webhook_signing::sign(&out.token, msg_id, timestamp, out.payload.as_bytes());
    ctx.agent
        .post(&out.url)
        .header("Authorization", &format!("Bearer {}", out.token))
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

fn refuse_private(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| e.to_string())?;
    let host = parsed.host_str().ok_or("no host")?;
    let port = parsed.port_or_known_default().unwrap_or(443);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?;
    for addr in addrs {
        if is_private(addr.ip()) {
            return Err(format!(
                "refused: {host} resolves to a private address (--webhook-block-private)"
            ));
        }
    }
    Ok(())
}

pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64 // CGNAT 100.64/10
        }
        IpAddr::V6(v6) => {
            let seg0 = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || (seg0 & 0xfe00) == 0xfc00 // unique local
                || (seg0 & 0xffc0) == 0xfe80 // link local
                || v6.to_ipv4_mapped().is_some_and(|v4| is_private(IpAddr::V4(v4)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_ranges_are_recognised() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.1.1",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "0.0.0.0",
        ] {
            assert!(is_private(ip.parse().expect("ip")), "{ip}");
        }
        for ip in ["8.8.8.8", "2001:4860:4860::8888", "172.32.0.1"] {
            assert!(!is_private(ip.parse().expect("ip")), "{ip}");
        }
    }

    #[test]
    fn jitter_stays_within_20_percent() {
        for _ in 0..100 {
            let d = jitter(Duration::from_secs(100));
            assert!(d >= Duration::from_secs(80) && d <= Duration::from_secs(120));
        }
        assert_eq!(jitter(Duration::ZERO), Duration::ZERO);
    }
}
