//! A logged-in portal session: listing by day (three requests per query window, facts
//! §4) and downloading the XML and PDF through the row links, which only work within the
//! session that listed them (facts §6).

use super::config::PortalConfig;
use super::conversation::Session;
use super::delta;
use super::html::{by_id, elements, form_fields, Fields};
use super::http::{path_of, Client};
use super::query::{self, Window};
use super::results::{self, Row, TableError};
use crate::domain::extraction::{Direction, Period};
use crate::sat::{Document, Metadata, SatError};
use scraper::Html;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use url::Url;

/// Where a listed invoice's documents are, for this session only.
#[derive(Debug, Clone)]
struct Links {
    xml: Option<Url>,
    pdf: Option<Url>,
}

pub(super) struct PortalSession {
    client: Client,
    config: PortalConfig,
    links: HashMap<String, Links>,
    /// Page changes already warned about, so one extraction logs each once.
    warned: HashSet<String>,
}

impl PortalSession {
    pub(super) fn new(client: Client, config: PortalConfig) -> Self {
        Self {
            client,
            config,
            links: HashMap::new(),
            warned: HashSet::new(),
        }
    }

    fn page_url(&self, direction: Direction) -> Result<Url, SatError> {
        self.config
            .portal_url
            .join(query::page_name(direction))
            .map_err(|e| SatError::Unavailable(format!("portal: bad query page URL: {e}")))
    }

    /// One query by dates. Returns the rows and how many rows the portal showed (the 500
    /// cap counts rows without a UUID).
    fn query(
        &mut self,
        direction: Direction,
        window: Window,
    ) -> Result<(Vec<Row>, usize), SatError> {
        let (rows, count) = self.search(
            direction,
            query::Mode::Dates,
            query::search_fields(direction, window),
        )?;
        log::debug!(
            "portal: {} {window}: {count} rows, {} with a UUID",
            direction.as_str(),
            rows.len()
        );
        Ok((rows, count))
    }

    /// One search: the page's form, the switch to `mode`, then the search with `fields`.
    fn search(
        &mut self,
        direction: Direction,
        mode: query::Mode,
        fields: Vec<(&'static str, String)>,
    ) -> Result<(Vec<Row>, usize), SatError> {
        let url = self.page_url(direction)?;
        let page = self.client.get_page(&url, "query page")?;
        let base = page_form(&page).ok_or_else(|| {
            unrecognised(&url, "the query page has no ASP.NET form (session lost?)")
        })?;

        let mut post = base;
        post.extend(query::mode_fields(mode));
        let answer = self.client.post_async(&url, &post, "query mode")?;
        let refreshed = delta_fields(&answer, &url)?;

        post.extend(refreshed);
        post.extend(fields);
        let answer = self.client.post_async(&url, &post, "search")?;
        delta_fields(&answer, &url)?; // surfaces a delta error or a lost session
        let table = results::parse(&answer, &self.config.portal_url).map_err(|e| match e {
            TableError::NoTable => unrecognised(&url, "the search answer has no results table"),
            other => unrecognised(&url, &other.to_string()),
        })?;
        for caption in &table.unknown_captions {
            self.warn_once(format!("unknown results column {caption:?} ignored"));
        }
        for caption in &table.missing_captions {
            self.warn_once(format!("results column {caption:?} missing"));
        }
        Ok((table.rows, table.row_count))
    }

    fn warn_once(&mut self, message: String) {
        if self.warned.insert(message.clone()) {
            log::warn!("portal: the SAT changed the results table: {message}");
        }
    }
}

/// The query page's form fields, or `None` when it is not an ASP.NET WebForms page.
fn page_form(page: &str) -> Option<Fields> {
    let doc = Html::parse_document(page);
    let form = by_id(doc.root_element(), "aspnetForm")
        .or_else(|| elements(doc.root_element(), "form").next())?;
    let fields = form_fields(form, query::excluded_from_page);
    fields.get("__VIEWSTATE").is_some().then_some(fields)
}

/// The hidden fields an async answer refreshes; failing on anything but a clean delta.
fn delta_fields(answer: &str, url: &Url) -> Result<Vec<(String, String)>, SatError> {
    if !delta::is_delta(answer) {
        return Err(unrecognised(
            url,
            "the async answer is not an MS-Ajax delta",
        ));
    }
    let records = delta::records(answer);
    if let Some(failure) = delta::failure(&records) {
        return Err(unrecognised(url, &failure));
    }
    Ok(delta::hidden_fields(&records))
}

fn unrecognised(url: &Url, what: &str) -> SatError {
    SatError::Unavailable(format!("portal query ({}): {what}", path_of(url)))
}

impl Session for PortalSession {
    fn list(&mut self, direction: Direction, period: Period) -> Result<Vec<Metadata>, SatError> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for day in query::days(period) {
            let mut capped = Vec::new();
            let rows = query::split_while_full(
                Window::whole_day(day),
                |w| self.query(direction, w),
                |w| capped.push(w),
            )?;
            for w in capped {
                log::warn!(
                    "portal: {} {w}: still {} rows in one second; the portal shows no more, some invoices may be missing",
                    direction.as_str(),
                    query::MAX_ROWS
                );
            }
            for row in rows {
                if !seen.insert(row.metadata.uuid.clone()) {
                    continue;
                }
                self.links.insert(
                    row.metadata.uuid.clone(),
                    Links {
                        xml: row.xml_url,
                        pdf: row.pdf_url,
                    },
                );
                out.push(row.metadata);
            }
        }
        Ok(out)
    }

    fn find(&mut self, direction: Direction, uuid: &str) -> Result<Option<Metadata>, SatError> {
        let (rows, _) = self.search(direction, query::Mode::Folio, query::folio_fields(uuid))?;
        let Some(row) = rows
            .into_iter()
            .find(|r| r.metadata.uuid.eq_ignore_ascii_case(uuid))
        else {
            return Ok(None);
        };
        self.links.insert(
            row.metadata.uuid.clone(),
            Links {
                xml: row.xml_url,
                pdf: row.pdf_url,
            },
        );
        Ok(Some(row.metadata))
    }

    fn download(
        &mut self,
        _direction: Direction,
        items: &[Metadata],
    ) -> Result<Vec<Document>, SatError> {
        let mut jobs = Vec::with_capacity(items.len());
        for item in items {
            let Some(links) = self.links.get(&item.uuid) else {
                return Err(SatError::Unavailable(format!(
                    "portal: {} was not listed in this session",
                    item.uuid
                )));
            };
            jobs.push((item.uuid.as_str(), links.clone()));
        }
        download_all(&self.client, &jobs, self.config.download_concurrency)
    }
}

/// Downloads every job on a small pool of threads sharing the session's cookie jar; the
/// first failure stops the others from starting new downloads.
fn download_all(
    client: &Client,
    jobs: &[(&str, Links)],
    concurrency: usize,
) -> Result<Vec<Document>, SatError> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let done: Mutex<Vec<Option<Result<Document, SatError>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    let workers = concurrency.clamp(1, jobs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((uuid, links)) = jobs.get(i) else {
                        break;
                    };
                    let result = download_one(client, uuid, links);
                    if result.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if let Ok(mut slots) = done.lock() {
                        slots[i] = Some(result);
                    }
                }
            });
        }
    });
    let slots = done
        .into_inner()
        .map_err(|_| SatError::Internal(anyhow::anyhow!("a download thread panicked")))?;
    // Every slot is filled unless a failure stopped the pool, and then that failure is
    // in some slot: report the first one in list order.
    let mut docs = Vec::with_capacity(jobs.len());
    let mut skipped = false;
    for slot in slots {
        match slot {
            Some(Ok(doc)) => docs.push(doc),
            Some(Err(e)) => return Err(e),
            None => skipped = true,
        }
    }
    if skipped {
        return Err(SatError::Unavailable(
            "portal: downloads stopped after a failure".into(),
        ));
    }
    Ok(docs)
}

fn download_one(client: &Client, uuid: &str, links: &Links) -> Result<Document, SatError> {
    let xml = match &links.xml {
        Some(url) => fetch_xml(client, uuid, url)?,
        None => None, // e.g. cancelled: the portal offers no XML
    };
    let pdf = match &links.pdf {
        Some(url) => fetch_pdf(client, uuid, url)?,
        None => None,
    };
    Ok(Document {
        uuid: uuid.to_string(),
        xml,
        pdf,
    })
}

/// The XML must come back 200, non-empty and be a stamped CFDI of this UUID. A login page
/// means the session is gone (the whole call fails); any other non-CFDI answer leaves this
/// invoice metadata-only for a later extraction to fetch.
fn fetch_xml(client: &Client, uuid: &str, url: &Url) -> Result<Option<Vec<u8>>, SatError> {
    let fetched = client.get_resource(url, "XML download")?;
    if fetched.status == 200 && fetched.body.is_empty() {
        return Err(SatError::Unavailable(format!(
            "portal XML download ({}): empty response for {uuid}",
            path_of(url)
        )));
    }
    let text = String::from_utf8_lossy(&fetched.body);
    if fetched.status == 200
        && text.contains("UUID=\"")
        && text
            .to_ascii_uppercase()
            .contains(&uuid.to_ascii_uppercase())
    {
        return Ok(Some(fetched.body));
    }
    if super::login::is_login_form(&text) {
        return Err(SatError::Unavailable(format!(
            "portal XML download ({}): the session was lost",
            path_of(url)
        )));
    }
    log::warn!(
        "portal: the XML of {uuid} did not come back as its CFDI (HTTP {}, {} bytes); left metadata-only",
        fetched.status,
        fetched.body.len()
    );
    Ok(None)
}

/// The PDF is optional: anything but a 200 `%PDF` answer is logged and skipped.
fn fetch_pdf(client: &Client, uuid: &str, url: &Url) -> Result<Option<Vec<u8>>, SatError> {
    let fetched = client.get_resource(url, "PDF download")?;
    if fetched.status == 200 && fetched.body.starts_with(b"%PDF") {
        return Ok(Some(fetched.body));
    }
    log::warn!(
        "portal: the PDF of {uuid} did not come back as a PDF (HTTP {}, {} bytes); skipped",
        fetched.status,
        fetched.body.len()
    );
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDED: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sat-portal-pages/"
    );

    #[test]
    fn the_recorded_query_page_gives_its_hidden_state_and_filters() {
        let bytes = std::fs::read(format!("{RECORDED}sample-response-receiver-form-page.html"))
            .expect("recorded page");
        let page = super::super::html::decode(&bytes);
        let fields = page_form(&page).expect("an ASP.NET form");
        for name in [
            "__CSRFTOKEN",
            "__EVENTTARGET",
            "__EVENTARGUMENT",
            "__LASTFOCUS",
            "__VIEWSTATE",
            "__VIEWSTATEGENERATOR",
            "ctl00$MainContent$FiltroCentral",
            "ctl00$MainContent$hfInicialBool",
            "ctl00$MainContent$CldFecha$DdlAnio",
            "ctl00$MainContent$DdlEstadoComprobante",
        ] {
            assert!(fields.get(name).is_some(), "{name} missing");
        }
        assert_eq!(
            fields.get("ctl00$MainContent$FiltroCentral"),
            Some("RdoFolioFiscal")
        );
        assert!(fields.get("__VIEWSTATE").is_some_and(|v| v.len() > 1000));
        assert_eq!(fields.get("__VIEWSTATEGENERATOR"), Some("FE9DB3F4"));
        let names: Vec<&str> = fields.pairs().map(|(n, _)| n).collect();
        assert!(
            !names.iter().any(|n| n.starts_with("ctl00$MainContent$Btn")),
            "{names:?}"
        );
        assert!(!names.contains(&"seleccionador"));
        assert!(page_form("<html><body><p>Mantenimiento</p></body></html>").is_none());
    }

    #[test]
    fn a_delta_error_or_a_non_delta_answer_is_unavailable() {
        let url = Url::parse("https://portal.example/ConsultaReceptor.aspx").expect("url");
        assert!(matches!(
            delta_fields("<html>login</html>", &url),
            Err(SatError::Unavailable(_))
        ));
        assert!(matches!(
            delta_fields("1|#||4|5|error|500|Boom!|", &url),
            Err(SatError::Unavailable(d)) if d.contains("Boom!")
        ));
        let ok = delta_fields("1|#||4|3|hiddenField|__VIEWSTATE|abc|", &url).expect("ok");
        assert_eq!(ok, [("__VIEWSTATE".to_string(), "abc".to_string())]);
    }
}
