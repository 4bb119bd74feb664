//! `/docs`: developer guides and the interactive API reference, embedded from `static/`.
//! `/docs/<path>` serves `static/docs/<path>`, else `<path>.html`, else
//! `<path>/index.html`; anything else is a JSON 404. The console (`/console`,
//! src/console.rs) serves its files from the same embedded tree through [`find`].

use crate::http::error::ApiError;
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

/// No inline script or style anywhere (pages load their code and styles from files);
/// `data:` images for the empty favicon and Swagger UI's icons; `blob:` for the console's
/// downloads; requests only to this origin; never framed.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; \
    base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

pub struct Asset(pub(crate) &'static File<'static>);

impl<'r> Responder<'r, 'static> for Asset {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let path = self.0.path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        // Code samples (`.py`) and unknown text read in the browser rather than download.
        let content_type = ContentType::from_extension(ext).unwrap_or(ContentType::Plain);
        // Pages and the console's own code change with each release and are small:
        // revalidate. The docs' assets are large and vendored: cache for a day.
        let cache = if ext == "html" || ext == "json" || path.starts_with("console") {
            "no-cache"
        } else {
            "public, max-age=86400"
        };
        let mut res = self.0.contents().respond_to(req)?;
        res.set_header(content_type);
        res.set_header(Header::new("Cache-Control", cache));
        res.set_header(Header::new("X-Content-Type-Options", "nosniff"));
        res.set_header(Header::new("Content-Security-Policy", CSP));
        res.set_header(Header::new("Referrer-Policy", "no-referrer"));
        Ok(res)
    }
}

/// The file `static/<root>/<rel>`, else `<rel>.html`, else `<rel>/index.html`.
pub(crate) fn find(root: &str, rel: &str) -> Option<&'static File<'static>> {
    let rel = rel.trim_matches('/');
    let base = if rel.is_empty() {
        root.to_string()
    } else {
        format!("{root}/{rel}")
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
    find("docs", "").map(Asset).ok_or(ApiError::NotFound)
}

/// Rocket refuses segments such as `..` or dot-files before we see them; those are
/// files we do not have, so a 404 like any other.
#[get("/docs/<path..>")]
fn docs_file(path: Result<PathBuf, PathError>) -> Result<Asset, ApiError> {
    let path = path.map_err(|_| ApiError::NotFound)?;
    let rel = path.to_str().ok_or(ApiError::NotFound)?;
    find("docs", rel).map(Asset).ok_or(ApiError::NotFound)
}
