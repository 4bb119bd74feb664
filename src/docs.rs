//! `/docs`: developer guides and the interactive API reference, embedded from `static/`.
//! `/docs/<path>` serves `static/docs/<path>`, else `<path>.html`, else
//! `<path>/index.html`; anything else is a JSON 404.

use crate::error::ApiError;
use include_dir::{include_dir, Dir, File};
use rocket::http::uri::error::PathError;
use rocket::http::{ContentType, Header};
use rocket::response::{self, Responder};
use rocket::{get, routes, Request, Route};
use std::path::PathBuf;

static STATIC: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/static");

pub fn routes() -> Vec<Route> {
    routes![docs_index, docs_file]
}

pub struct Asset(&'static File<'static>);

impl<'r> Responder<'r, 'static> for Asset {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let path = self.0.path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        // Code samples (`.py`) and unknown text read in the browser rather than download.
        let content_type = ContentType::from_extension(ext).unwrap_or(ContentType::Plain);
        // Pages change with each release and are small: revalidate. Assets are large
        // and vendored: cache for a day.
        let cache = if ext == "html" || ext == "json" {
            "no-cache"
        } else {
            "public, max-age=86400"
        };
        let mut res = self.0.contents().respond_to(req)?;
        res.set_header(content_type);
        res.set_header(Header::new("Cache-Control", cache));
        res.set_header(Header::new("X-Content-Type-Options", "nosniff"));
        Ok(res)
    }
}

fn find(rel: &str) -> Option<&'static File<'static>> {
    let rel = rel.trim_matches('/');
    let base = if rel.is_empty() {
        "docs".to_string()
    } else {
        format!("docs/{rel}")
    };
    [
        base.clone(),
        format!("{base}.html"),
        format!("{base}/index.html"),
    ]
    .iter()
    .find_map(|p| STATIC.get_file(p))
}

#[get("/docs")]
fn docs_index() -> Result<Asset, ApiError> {
    find("").map(Asset).ok_or(ApiError::NotFound)
}

/// Rocket refuses segments such as `..` or dot-files before we see them; those are
/// files we do not have, so a 404 like any other.
#[get("/docs/<path..>")]
fn docs_file(path: Result<PathBuf, PathError>) -> Result<Asset, ApiError> {
    let path = path.map_err(|_| ApiError::NotFound)?;
    let rel = path.to_str().ok_or(ApiError::NotFound)?;
    find(rel).map(Asset).ok_or(ApiError::NotFound)
}
