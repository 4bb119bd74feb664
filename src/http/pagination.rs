//! `?limit=` / `?cursor=` and the `{ data, next_cursor }` envelope. A cursor is the
//! opaque base64 of the last row's sort key; lists fetch `limit + 1` rows to know
//! whether another page exists.

use crate::app::Context;
use crate::db::Conn;
use crate::domain::FieldErrors;
use crate::http::error::ApiResult;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rocket::response::content::RawJson;
use rocket::serde::json::Json;
use serde::Serialize;
use serde_json::Value;

pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 500;

/// `{ "data": [...], "next_cursor": ... }`: items are any serializable view, so a list
/// can splice JSON rendered elsewhere (`RawValue`) without rebuilding it.
#[derive(Debug, Serialize)]
pub struct Envelope<V> {
    pub data: Vec<V>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Page {
    pub limit: usize,
    /// The sort key after which the page starts (decoded cursor).
    pub after: Option<Vec<String>>,
}

impl Page {
    /// Parses `limit` and `cursor`, adding errors under their names. `key_len` is the
    /// number of parts the list's sort key has.
    pub fn parse(
        limit: Option<&str>,
        cursor: Option<&str>,
        key_len: usize,
        errors: &mut FieldErrors,
    ) -> Page {
        let limit = match limit.map(str::trim) {
            None => DEFAULT_LIMIT,
            Some(s) => match s.parse::<usize>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
                _ => {
                    errors.add("limit", "must be an integer from 1 to 500");
                    DEFAULT_LIMIT
                }
            },
        };
        let after = match cursor {
            None | Some("") => None,
            Some(c) => match decode(c) {
                Some(parts) if parts.len() == key_len => Some(parts),
                _ => {
                    errors.add("cursor", "is invalid");
                    None
                }
            },
        };
        Page { limit, after }
    }

    /// `limit` and `cursor` of a list without other parameters; a bad one is a 422.
    pub fn from_query(
        query: &crate::http::query::Query,
        key_len: usize,
    ) -> Result<Page, crate::http::error::ApiError> {
        let mut errors = FieldErrors::new();
        let page = Page::parse(
            query.get("limit"),
            query.get("cursor"),
            key_len,
            &mut errors,
        );
        errors.into_result()?;
        Ok(page)
    }

    /// Builds the envelope from up to `limit + 1` rows, each with its sort key.
    pub fn envelope<T, V>(
        &self,
        mut rows: Vec<(Vec<String>, T)>,
        view: impl Fn(T) -> V,
    ) -> Envelope<V> {
        let more = rows.len() > self.limit;
        rows.truncate(self.limit);
        let next_cursor = if more {
            rows.last().map(|(key, _)| encode(key))
        } else {
            None
        };
        let data = rows.into_iter().map(|(_, row)| view(row)).collect();
        Envelope { data, next_cursor }
    }

    /// `LIMIT` for the query: one more than the page to detect a next page.
    pub fn fetch(&self) -> i64 {
        (self.limit + 1) as i64
    }
}

impl Envelope<String> {
    /// The envelope as JSON text, splicing items that already are JSON text (rendered
    /// by SQLite's `json_object`), so a page is never parsed or rebuilt.
    pub fn splice(self) -> RawJson<String> {
        let cursor = serde_json::to_string(&self.next_cursor).unwrap_or_else(|_| "null".into());
        let len = self.data.iter().map(|d| d.len() + 1).sum::<usize>() + cursor.len() + 32;
        let mut out = String::with_capacity(len);
        out.push_str("{\"data\":[");
        for (i, item) in self.data.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(item);
        }
        out.push_str("],\"next_cursor\":");
        out.push_str(&cursor);
        out.push('}');
        RawJson(out)
    }
}

fn encode(key: &[String]) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(key).unwrap_or_default())
}

fn decode(cursor: &str) -> Option<Vec<String>> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor.trim()).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Turns a list of rows into `(sort key, row)` pairs keyed on their id.
pub fn keyed_by_id<T>(rows: Vec<T>, id: fn(&T) -> &str) -> Vec<(Vec<String>, T)> {
    rows.into_iter()
        .map(|r| (vec![id(&r).to_string()], r))
        .collect()
}

/// A list keyed on UUIDv7 ids, newest first: `fetch(conn, after_id, limit)` reads up to
/// `limit` rows older than the cursor's id; paging and the envelope are shared.
pub async fn list_by_id<T: Send + 'static>(
    ctx: &Context,
    page: Page,
    fetch: impl FnOnce(&Conn, Option<&str>, i64) -> anyhow::Result<Vec<T>> + Send + 'static,
    id: fn(&T) -> &str,
    view: fn(T) -> Value,
) -> ApiResult<Json<Envelope<Value>>> {
    let (after, limit) = (page.after.as_ref().map(|k| k[0].clone()), page.fetch());
    let rows = ctx
        .db
        .read(move |c| fetch(c, after.as_deref(), limit))
        .await?;
    Ok(Json(page.envelope(keyed_by_id(rows, id), view)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_defaults_and_bounds() {
        let mut e = FieldErrors::new();
        assert_eq!(Page::parse(None, None, 1, &mut e).limit, 50);
        assert_eq!(Page::parse(Some("500"), None, 1, &mut e).limit, 500);
        assert!(e.is_empty());
        Page::parse(Some("0"), None, 1, &mut e);
        assert!(e.contains("limit"));
        let mut e = FieldErrors::new();
        Page::parse(Some("501"), None, 1, &mut e);
        Page::parse(Some("abc"), None, 1, &mut e);
        assert!(e.contains("limit"));
    }

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        let page = Page {
            limit: 1,
            after: None,
        };
        let env = page.envelope(vec![(vec!["a".into()], 1), (vec!["b".into()], 2)], |n| n);
        assert_eq!(env.data, vec![1]);
        let cursor = env.next_cursor.expect("more pages");
        let mut e = FieldErrors::new();
        let next = Page::parse(None, Some(&cursor), 1, &mut e);
        assert_eq!(next.after, Some(vec!["a".to_string()]));
        Page::parse(None, Some("!!not-base64"), 1, &mut e);
        Page::parse(None, Some(&cursor), 2, &mut e);
        assert!(e.contains("cursor"));
    }

    #[test]
    fn spliced_envelopes_are_the_serialized_ones() {
        let page = Page {
            limit: 2,
            after: None,
        };
        let rows = || {
            vec![
                (vec!["a".into()], r#"{"n":1.50}"#.to_string()),
                (vec!["b".into()], r#"{"n":"x"}"#.to_string()),
                (vec!["c".into()], "{}".to_string()),
            ]
        };
        let spliced: serde_json::Value =
            serde_json::from_str(&page.envelope(rows(), |r| r).splice().0).expect("valid JSON");
        let env = page.envelope(rows(), |r| {
            serde_json::from_str::<serde_json::Value>(&r).expect("valid JSON")
        });
        assert_eq!(spliced, serde_json::to_value(env).expect("serializable"));
        assert_eq!(spliced["data"][0]["n"].to_string(), "1.50");
        let last = Page {
            limit: 5,
            after: None,
        }
        .envelope(rows(), |r| r)
        .splice()
        .0;
        assert!(last.ends_with(r#""next_cursor":null}"#), "{last}");
    }

    #[test]
    fn last_page_has_no_cursor() {
        let page = Page {
            limit: 5,
            after: None,
        };
        let env = page.envelope(vec![(vec!["a".into()], 1)], |n| n);
        assert!(env.next_cursor.is_none());
    }
}
