//! The ASP.NET MS-Ajax "delta" that answers an async postback: a run of
//! `length|type|id|content|` records (facts §4). `length` counts the content in UTF-16
//! code units, as JavaScript does. Hidden fields (`__VIEWSTATE`, ...) come as
//! `hiddenField` records; a server error as `error`; a lost session as `pageRedirect`.
//!
//! Recorded deltas (and proxies that re-encode line ends) do not always keep the
//! lengths exact, so when the exact reading breaks we fall back to the tolerant reading
//! of the facts' scraper: split on `|` and pick the records by type. Hidden-field values
//! (base64, ids) never contain `|`, so that reading is safe for them.

/// One record of a delta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Record {
    pub kind: String,
    pub id: String,
    pub content: String,
}

/// Whether `text` looks like a delta at all (it starts with `digits|`).
pub(super) fn is_delta(text: &str) -> bool {
    let head = text.trim_start();
    let digits = head.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && head.as_bytes().get(digits) == Some(&b'|')
}

/// The records of an exact delta; `None` when the lengths do not line up.
pub(super) fn parse_exact(text: &str) -> Option<Vec<Record>> {
    let mut rest = text.trim_start();
    let mut records = Vec::new();
    while !rest.trim().is_empty() {
        let (length, after) = rest.split_once('|')?;
        let length: usize = length.parse().ok()?;
        let (kind, after) = after.split_once('|')?;
        let (id, after) = after.split_once('|')?;
        let end = utf16_offset(after, length)?;
        let content = &after[..end];
        rest = after[end..].strip_prefix('|')?;
        records.push(Record {
            kind: kind.to_string(),
            id: id.to_string(),
            content: content.to_string(),
        });
    }
    Some(records)
}

/// The byte offset in `s` after `units` UTF-16 code units.
fn utf16_offset(s: &str, units: usize) -> Option<usize> {
    let mut seen = 0;
    for (offset, c) in s.char_indices() {
        if seen == units {
            return Some(offset);
        }
        seen += c.len_utf16();
        if seen > units {
            return None;
        }
    }
    (seen == units).then_some(s.len())
}

/// The records the connector acts on, read exactly when possible and tolerantly otherwise.
pub(super) fn records(text: &str) -> Vec<Record> {
    if let Some(exact) = parse_exact(text) {
        return exact;
    }
    let tokens: Vec<&str> = text.split('|').collect();
    let mut out = Vec::new();
    for window in tokens.windows(4) {
        let [length, kind, id, content] = window else {
            continue;
        };
        let is_length = !length.is_empty() && length.bytes().all(|b| b.is_ascii_digit());
        if is_length && matches!(*kind, "hiddenField" | "error" | "pageRedirect") {
            out.push(Record {
                kind: kind.to_string(),
                id: id.to_string(),
                content: content.to_string(),
            });
        }
    }
    out
}

/// The hidden fields the delta refreshes, in order.
pub(super) fn hidden_fields(records: &[Record]) -> Vec<(String, String)> {
    records
        .iter()
        .filter(|r| r.kind == "hiddenField" && !r.id.is_empty())
        .map(|r| (r.id.clone(), r.content.clone()))
        .collect()
}

/// A server error or a redirect (session expired) reported inside the delta.
pub(super) fn failure(records: &[Record]) -> Option<String> {
    records.iter().find_map(|r| match r.kind.as_str() {
        "error" => Some(format!("server error {}: {}", r.id, short(&r.content))),
        "pageRedirect" => Some(format!(
            "redirected to {} (session lost?)",
            short(r.content.split('?').next().unwrap_or(""))
        )),
        _ => None,
    })
}

fn short(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(200) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDED: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sat-portal-pages/"
    );

    fn recorded(name: &str) -> String {
        let bytes = std::fs::read(format!("{RECORDED}{name}")).expect("recorded page");
        super::super::html::decode(&bytes)
    }

    #[test]
    fn an_exact_delta_parses_record_by_record_counting_utf16_units() {
        let text = "1|#||4|6|updatePanel|p1|a|b|cé|3|hiddenField|__VIEWSTATE|xyz|0|hiddenField|__EVENTTARGET||2|scriptBlock||😀|";
        let records = parse_exact(text).expect("exact");
        assert_eq!(records.len(), 5);
        assert_eq!(records[1].content, "a|b|cé", "content may contain pipes");
        assert_eq!(records[4].content, "😀", "astral chars count two units");
        assert_eq!(
            hidden_fields(&records),
            [
                ("__VIEWSTATE".to_string(), "xyz".to_string()),
                ("__EVENTTARGET".to_string(), String::new())
            ]
        );
        assert_eq!(failure(&records), None);
    }

    #[test]
    fn inexact_lengths_fall_back_to_the_tolerant_reading() {
        let text = "1|#||4|99|updatePanel|p|short|3|hiddenField|__VIEWSTATE|xyz|";
        assert_eq!(parse_exact(text), None);
        let fields = hidden_fields(&records(text));
        assert_eq!(fields, [("__VIEWSTATE".to_string(), "xyz".to_string())]);
    }

    #[test]
    fn errors_and_redirects_are_failures() {
        let err = records("1|#||4|5|error|500|Boom!|");
        assert_eq!(failure(&err).as_deref(), Some("server error 500: Boom!"));
        let redirect = records("1|#||4|26|pageRedirect||/login.aspx?ReturnUrl=%2fx|");
        assert!(failure(&redirect)
            .expect("a failure")
            .contains("/login.aspx"));
        assert!(is_delta("1|#||4|"));
        assert!(!is_delta("<html>"));
        assert!(!is_delta(""));
    }

    #[test]
    fn the_recorded_mode_selection_delta_refreshes_the_viewstate() {
        let text = recorded("sample-response-receiver-using-filters-initial.html");
        assert!(is_delta(&text));
        let records = records(&text);
        let fields = hidden_fields(&records);
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        for name in [
            "__EVENTTARGET",
            "__EVENTARGUMENT",
            "__LASTFOCUS",
            "__VIEWSTATE",
        ] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        let viewstate = &fields
            .iter()
            .find(|(n, _)| n == "__VIEWSTATE")
            .expect("viewstate")
            .1;
        assert!(viewstate.len() > 1000, "a real viewstate");
        assert_eq!(failure(&records), None);
    }
}
