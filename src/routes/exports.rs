//! `GET /v1/invoices/export`, `/v1/invoices/export/items` and `/v1/retentions/export`:
//! the list's filters as a CSV or XLSX file, in the documented columns or the
//! accountant's layout (`layout=accountant`, named for whose and which documents it
//! holds), written on the heavy pool (`http::heavy`) into a spool and streamed as it is
//! written.

use rocket::response::{self, stream::ReaderStream, Responder, Response};
use rocket::{get, routes, Request, Route, State};

use super::documents::{self, Served};
use crate::auth::AuthUser;
use crate::domain::FieldErrors;
use crate::export::spool::{self, Spooled, Start};
use crate::export::{self, About, Format, Layout, Rows};
use crate::http::error::{ApiError, ApiResult};
use crate::http::heavy::{Download, Heavy};
use crate::http::query::Query;
use crate::http::Ctx;
use rocket::futures::StreamExt;

pub fn routes() -> Vec<Route> {
    routes![export_invoices, export_items, export_retentions]
}

#[get("/v1/invoices/export")]
async fn export_invoices(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Export> {
    start(user, &query, ctx, heavy, &export::INVOICES).await
}

#[get("/v1/invoices/export/items")]
async fn export_items(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Export> {
    start(user, &query, ctx, heavy, &export::ITEMS).await
}

#[get("/v1/retentions/export")]
async fn export_retentions(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Export> {
    start(user, &query, ctx, heavy, &export::RETENTIONS).await
}

/// Validates the query, starts writing on the heavy pool (in the organization's turn)
/// into a spool and waits for the first bytes: an export that fails before writing
/// anything is a 500, not an empty 200. The turn ends when the file is written, however
/// slowly the client reads it.
async fn start<C: Served>(
    user: AuthUser,
    query: &Query,
    ctx: &Ctx,
    heavy: &Heavy,
    rows: &'static Rows<C>,
) -> ApiResult<Export> {
    let mut errors = FieldErrors::new();
    let format = match query.get("format") {
        None => Format::Csv,
        Some(f) => Format::parse(f).unwrap_or_else(|| {
            errors.add("format", "must be one of csv, xlsx");
            Format::Csv
        }),
    };
    let layout = match query.get("layout") {
        None => Layout::Api,
        Some(l) => Layout::parse(l).unwrap_or_else(|| {
            errors.add("layout", "must be one of api, accountant");
            Layout::Api
        }),
    };
    let filter = C::parse_filter(query, &mut errors);
    let entity_id = documents::entity_id(query, &mut errors);
    errors.into_result()?;
    let about = match layout {
        Layout::Api => About::default(),
        Layout::Accountant => about::<C>(query, entity_id, &user.org_id, ctx).await?,
    };
    let filename = match layout {
        Layout::Api => format!("{}.{}", rows.file_stem, format.extension()),
        Layout::Accountant => about.file_name(rows.accountant, format.extension()),
    };
    let download = heavy.download(&user.org_id)?;
    let turn = heavy.turn(&user.org_id).await?;
    let (out, mut spooled) = spool::new().map_err(|e| ApiError::Internal(e.into()))?;
    let db = ctx.db.clone();
    let task = heavy.spawn(move || {
        let _turn = turn;
        let mut out = out;
        let written = export::write(
            &db,
            &user.org_id,
            &filter,
            rows,
            layout,
            &about,
            format,
            &mut out,
        );
        out.finish(written.is_ok());
        written
    });
    if spooled.start().await == Start::Empty {
        // Nothing was written: the writer failed (or panicked) before its first bytes.
        let result = task.await.map_err(|e| ApiError::Internal(e.into()))?;
        return Err(ApiError::Internal(match result {
            Err(e) => e,
            Ok(_) => anyhow::anyhow!("the export wrote nothing"),
        }));
    }
    // Later failures cut the stream short; they are logged.
    tokio::spawn(async move {
        match task.await {
            Ok(Err(e)) if !is_gone(&e) => log::error!("export failed mid-stream: {e:#}"),
            Err(e) => log::error!("export task failed: {e}"),
            _ => {}
        }
    });
    Ok(Export {
        spooled,
        download,
        format,
        filename,
    })
}

/// What an accountant's file is about, from the query: the taxpayer filtered on (by its
/// RFC and name; another organization's names none, as its list is empty), the
/// direction, the period (the class's bounds, `Served::PERIOD`) and the search.
async fn about<C: Served>(
    query: &Query,
    entity_id: Option<String>,
    org_id: &str,
    ctx: &Ctx,
) -> ApiResult<About> {
    let org = org_id.to_owned();
    let entity = match entity_id {
        Some(id) => {
            ctx.db
                .read(move |c| crate::db::entities::get(c, &org, &id))
                .await?
        }
        None => None,
    };
    let given = |name: &str| {
        query
            .get(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let (from, to) = C::PERIOD;
    Ok(About {
        tax_id: entity.as_ref().map(|e| e.tax_id.clone()),
        name: entity.map(|e| e.name),
        direction: given("direction"),
        from: given(from),
        to: given(to),
        search: given("q"),
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
    spooled: Spooled,
    /// Released when the response ends, with its spool file.
    download: Download,
    format: Format,
    /// Letters, digits, `-`, `_` and `.` only (`About::file_name`).
    filename: String,
}

impl<'r> Responder<'r, 'static> for Export {
    fn respond_to(self, _: &'r Request<'_>) -> response::Result<'static> {
        let filename = self.filename;
        let download = self.download;
        Response::build()
            .raw_header("Content-Type", self.format.media_type())
            .raw_header(
                "Content-Disposition",
                format!("attachment; filename=\"{filename}\""),
            )
            .streamed_body(ReaderStream::from(self.spooled.into_stream().map(
                move |chunk| {
                    let _open = &download;
                    chunk
                },
            )))
            .ok()
    }
}
