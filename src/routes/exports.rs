//! `GET /v1/invoices/export` and `/v1/invoices/export/items`: the list's filters as a
//! CSV or XLSX file, written on the blocking pool and streamed as it is written.

use std::io::Cursor;

use rocket::futures::stream::{self, StreamExt};
use rocket::response::{self, stream::ReaderStream, Responder, Response};
use rocket::{get, routes, Request, Route};
use tokio::sync::mpsc;

use super::invoices::parse_filter;
use super::Ctx;
use crate::auth::AuthUser;
use crate::error::{ApiError, ApiResult, FieldErrors};
use crate::export::{self, stream::ChannelWriter, Format, Rows};
use crate::http::query::Query;

pub fn routes() -> Vec<Route> {
    routes![export_invoices, export_items]
}

#[get("/v1/invoices/export")]
async fn export_invoices(user: AuthUser, query: Query, ctx: &Ctx) -> ApiResult<Export> {
    start(user, &query, ctx, Rows::Invoices).await
}

#[get("/v1/invoices/export/items")]
async fn export_items(user: AuthUser, query: Query, ctx: &Ctx) -> ApiResult<Export> {
    start(user, &query, ctx, Rows::Items).await
}

/// Validates the query, starts writing on the blocking pool and waits for the first
/// chunk: an export that fails before writing anything is a 500, not an empty 200.
async fn start(user: AuthUser, query: &Query, ctx: &Ctx, rows: Rows) -> ApiResult<Export> {
    let mut errors = FieldErrors::new();
    let format = match query.get("format") {
        None => Format::Csv,
        Some(f) => Format::parse(f).unwrap_or_else(|| {
            errors.add("format", "must be one of csv, xlsx");
            Format::Csv
        }),
    };
    let filter = parse_filter(query, &mut errors);
    errors.into_result()?;
    let (tx, mut rx) = mpsc::channel(export::stream::DEPTH);
    let db = ctx.db.clone();
    let task = tokio::task::spawn_blocking(move || {
        let out = ChannelWriter::new(tx);
        export::write(&db, &user.org_id, &filter, rows, format, out)
    });
    let Some(first) = rx.recv().await else {
        // Nothing was written: the writer failed (or panicked) before its first chunk.
        let result = task.await.map_err(|e| ApiError::Internal(e.into()))?;
        return Err(ApiError::Internal(match result {
            Err(e) => e,
            Ok(_) => anyhow::anyhow!("the export wrote nothing"),
        }));
    };
    // Later failures can only cut the stream short; they are logged.
    tokio::spawn(async move {
        match task.await {
            Ok(Err(e)) if !is_gone(&e) => log::error!("export failed mid-stream: {e:#}"),
            Err(e) => log::error!("export task failed: {e}"),
            _ => {}
        }
    });
    Ok(Export {
        first,
        rest: rx,
        format,
        rows,
    })
}

/// The client closed the connection: not an error worth logging.
fn is_gone(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

pub struct Export {
    first: Vec<u8>,
    rest: mpsc::Receiver<Vec<u8>>,
    format: Format,
    rows: Rows,
}

impl<'r> Responder<'r, 'static> for Export {
    fn respond_to(self, _: &'r Request<'_>) -> response::Result<'static> {
        let rest = stream::unfold(self.rest, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        });
        let chunks = stream::once(async move { self.first }).chain(rest);
        let filename = format!("{}.{}", self.rows.file_stem(), self.format.extension());
        Response::build()
            .raw_header("Content-Type", self.format.media_type())
            .raw_header(
                "Content-Disposition",
                format!("attachment; filename=\"{filename}\""),
            )
            .streamed_body(ReaderStream::from(chunks.map(Cursor::new)))
            .ok()
    }
}
