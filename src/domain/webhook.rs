//! Webhook registrations.

use super::event::Kind;
use super::required_string;
use crate::domain::FieldErrors;
use serde_json::{Map, Value};

/// How many webhooks one organization may register: each event is one delivery per
/// webhook, so this bounds the deliveries one change can queue.
pub const MAX_PER_ORG: usize = 20;

/// The 422 (on `body`) when the organization already has `MAX_PER_ORG` webhooks.
pub fn too_many() -> FieldErrors {
    FieldErrors::single(
        "body",
        &format!("an organization can have at most {MAX_PER_ORG} webhooks; delete one first"),
    )
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewWebhook {
    /// Normalized: the URL exactly as the service will call it.
    pub url: String,
    /// Never empty: absent or empty in input means every event.
    pub events: Vec<String>,
}

impl NewWebhook {
    pub fn parse(body: &Map<String, Value>) -> Result<NewWebhook, FieldErrors> {
        let mut errors = FieldErrors::new();
        let url = required_string(body, "url", "url", &mut errors).and_then(|raw| {
            let url = normalized_url(raw.trim());
            if url.is_none() {
                errors.add("url", "must be an absolute http or https URL with a host");
            }
            url
        });
        let events = parse_events(body.get("events"), &mut errors);
        match url {
            Some(url) if errors.is_empty() => Ok(NewWebhook { url, events }),
            _ => Err(errors),
        }
    }
}

/// The URL as the service will call it (lower-case scheme and host, no default port,
/// dot segments resolved), or None unless it is `http(s)://` followed by a host. The
/// URL parser would read `https:///x` or `https:x` as the host `x`; those are refused.
fn normalized_url(s: &str) -> Option<String> {
    let (scheme, rest) = s.split_once("://")?;
    let written_host = !rest.starts_with(['/', '\\', '?', '#', '@', ':']) && !rest.is_empty();
    let url = url::Url::parse(s).ok()?;
    let ok = written_host
        && matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https")
        && url.host_str().is_some_and(|h| !h.is_empty());
    ok.then(|| url.to_string())
}

fn parse_events(value: Option<&Value>, errors: &mut FieldErrors) -> Vec<String> {
    let all = || Kind::ALL.iter().map(|k| k.name().to_string()).collect();
    let items = match value {
        None | Some(Value::Null) => return all(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            errors.add("events", "must be an array of event names");
            return vec![];
        }
    };
    let mut events: Vec<String> = vec![];
    for item in items {
        match item.as_str().and_then(Kind::parse).map(Kind::name) {
            Some(name) if !events.iter().any(|e| e == name) => events.push(name.to_string()),
            Some(_) => {}
            None => errors.add(
                "events",
                &format!("must contain only {}", Kind::names_listed()),
            ),
        }
    }
    if events.is_empty() {
        all()
    } else {
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<NewWebhook, FieldErrors> {
        NewWebhook::parse(v.as_object().expect("object"))
    }

    #[test]
    fn urls_must_be_absolute_http_with_a_host() {
        assert!(parse(json!({"url": "https://example.com/hook"})).is_ok());
        assert!(parse(json!({"url": "http://127.0.0.1:9000/x"})).is_ok());
        for bad in [
            json!("ftp://example.com"),
            json!("/relative"),
            json!("not a url"),
            json!(""),
            json!(42),
            json!("http://"),
            json!("https:///no-host"),
            json!("https:no-host"),
            json!("http:\\\\example.com"),
            json!("https://@/x"),
        ] {
            assert!(
                parse(json!({"url": bad})).expect_err("bad").contains("url"),
                "{bad}"
            );
        }
    }

    #[test]
    fn urls_are_stored_as_the_service_will_call_them() {
        let url = |raw: &str| parse(json!({ "url": raw })).expect("valid").url;
        assert_eq!(
            url("HTTPS://Example.COM:443/a/../b"),
            "https://example.com/b"
        );
        assert_eq!(
            url(" http://127.0.0.1:9000/x?q=1 "),
            "http://127.0.0.1:9000/x?q=1"
        );
        assert_eq!(url("https://example.com"), "https://example.com/");
        assert_eq!(url("http://[::1]:80/h"), "http://[::1]/h");
    }

    #[test]
    fn events_default_to_all_and_reject_unknown_names() {
        assert_eq!(
            parse(json!({"url": "https://a.mx"}))
                .expect("ok")
                .events
                .len(),
            7
        );
        assert_eq!(
            parse(json!({"url": "https://a.mx", "events": []}))
                .expect("ok")
                .events
                .len(),
            7
        );
        assert_eq!(
            parse(json!({"url": "https://a.mx", "events": ["entity.update"]}))
                .expect("ok")
                .events,
            vec!["entity.update".to_string()]
        );
        assert_eq!(
            parse(json!({"url": "https://a.mx", "events": ["invoice.updated", "invoice.created"]}))
                .expect("ok")
                .events,
            ["invoice.updated", "invoice.created"]
        );
        assert!(
            parse(json!({"url": "https://a.mx", "events": ["invoice.deleted"]}))
                .expect_err("bad")
                .contains("events")
        );
        assert!(
            parse(json!({"url": "https://a.mx", "events": "entity.update"}))
                .expect_err("bad")
                .contains("events")
        );
    }
}
