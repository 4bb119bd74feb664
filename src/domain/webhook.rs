//! Webhook registrations.

use super::required_string;
use crate::error::FieldErrors;
use serde_json::{Map, Value};

pub const EVENT_NAMES: [&str; 2] = ["extraction.update", "entity.update"];

#[derive(Debug, Clone, PartialEq)]
pub struct NewWebhook {
    pub url: String,
    /// Never empty: absent or empty in input means every event.
    pub events: Vec<String>,
}

impl NewWebhook {
    pub fn parse(body: &Map<String, Value>) -> Result<NewWebhook, FieldErrors> {
        let mut errors = FieldErrors::new();
        let url = required_string(body, "url", "url", &mut errors).and_then(|raw| {
            let ok = valid_url(raw.trim());
            if !ok {
                errors.add("url", "must be an absolute http or https URL");
            }
            ok.then(|| raw.trim().to_string())
        });
        let events = parse_events(body.get("events"), &mut errors);
        match url {
            Some(url) if errors.is_empty() => Ok(NewWebhook { url, events }),
            _ => Err(errors),
        }
    }
}

fn valid_url(s: &str) -> bool {
    match url::Url::parse(s) {
        Ok(u) => {
            matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
        }
        Err(_) => false,
    }
}

fn parse_events(value: Option<&Value>, errors: &mut FieldErrors) -> Vec<String> {
    let all = || EVENT_NAMES.iter().map(|s| s.to_string()).collect();
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
        match item.as_str().filter(|s| EVENT_NAMES.contains(s)) {
            Some(name) if !events.iter().any(|e| e == name) => events.push(name.to_string()),
            Some(_) => {}
            None => errors.add(
                "events",
                "must contain only extraction.update or entity.update",
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
        ] {
            assert!(
                parse(json!({"url": bad})).expect_err("bad").contains("url"),
                "{bad}"
            );
        }
    }

    #[test]
    fn events_default_to_all_and_reject_unknown_names() {
        assert_eq!(
            parse(json!({"url": "https://a.mx"}))
                .expect("ok")
                .events
                .len(),
            2
        );
        assert_eq!(
            parse(json!({"url": "https://a.mx", "events": []}))
                .expect("ok")
                .events
                .len(),
            2
        );
        assert_eq!(
            parse(json!({"url": "https://a.mx", "events": ["entity.update"]}))
                .expect("ok")
                .events,
            vec!["entity.update".to_string()]
        );
        assert!(
            parse(json!({"url": "https://a.mx", "events": ["invoice.created"]}))
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
