//! A fake SAT portal in the test process. It answers in the order the real one does
//! (login page with captcha -> credential POST -> portal home redirect to the WS-Fed
//! auto-post -> signed-in home -> query page -> two async postbacks -> downloads), sets
//! and checks cookies at every step, and checks that the connector sends back the state
//! it was handed (`__VIEWSTATE` from the page, then from the delta).

use crate::common::fake_http::{Request, Response, Server};
use chrono::{NaiveDate, NaiveDateTime, Timelike};
use pages::RowSpec;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub mod pages;

pub const LOGIN_PATH: &str = "/nidp/app/login";
pub const LOGIN_QUERY: &str = "id=SATUPCFDiCon&sid=0&option=credential&sid=0";
const WSFED_PATH: &str = "/nidp/wsfed/ep";
const PORTAL_PREFIX: &str = "/portal/";

/// One invoice the fake lists and serves.
#[derive(Debug, Clone)]
pub struct FakeInvoice {
    pub row: RowSpec,
    pub issued: NaiveDateTime,
    pub xml: Option<Vec<u8>>,
    pub pdf: Option<Vec<u8>>,
}

/// How a step misbehaves, for the failure tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    None,
    /// The login page is a maintenance page.
    LoginMaintenance,
    /// The login page answers 503.
    LoginDown,
    /// The login page never answers in time.
    LoginHangs,
    /// The search answers a delta without a results table.
    SearchWithoutTable,
    /// The portal home after sign-in does not show the RFC.
    NoRfcOnHome,
}

pub struct Setup {
    pub rfc: String,
    pub password: String,
    pub invoices: Vec<FakeInvoice>,
    /// Serve this HTML (e.g. a recorded page) as every search's results panel instead.
    pub search_html: Option<String>,
    /// Serve this whole answer (e.g. a recorded delta) to every search instead.
    pub search_raw: Option<String>,
    pub fault: Fault,
}

impl Setup {
    pub fn new(rfc: &str, password: &str) -> Self {
        Self {
            rfc: rfc.into(),
            password: password.into(),
            invoices: Vec::new(),
            search_html: None,
            search_raw: None,
            fault: Fault::None,
        }
    }
}

/// What the fake saw, for assertions.
#[derive(Debug, Default)]
pub struct Seen {
    pub captchas_served: u32,
    pub login_posts: u32,
    pub logins_accepted: u32,
    /// Successful WS-Fed auto-posts (portal sessions opened).
    pub sign_ins: u32,
    /// (page, start second, end second) of every search.
    pub searches: Vec<(String, NaiveDate, u32, u32)>,
    /// (page, UUID) of every search by folio fiscal.
    pub folio_searches: Vec<(String, String)>,
    pub downloads: Vec<String>,
    /// Requests refused for a missing or wrong cookie or state.
    pub refusals: Vec<String>,
    pub user_agents: Vec<String>,
}

struct State {
    setup: Setup,
    seen: Seen,
    /// IdP session cookie -> captcha answer it was shown.
    captcha_of: HashMap<String, String>,
    next_id: u32,
    signed_in: Vec<String>,
    portal_sessions: Vec<String>,
    page_viewstate: String,
    mode_delta: String,
    mode_viewstate: String,
}

pub struct FakePortal {
    pub server: Server,
    state: Arc<Mutex<State>>,
}

impl FakePortal {
    pub fn start(setup: Setup) -> FakePortal {
        let (_, page_viewstate) = pages::query_page();
        let (mode_delta, mode_viewstate) = pages::mode_delta();
        let state = Arc::new(Mutex::new(State {
            setup,
            seen: Seen::default(),
            captcha_of: HashMap::new(),
            next_id: 1,
            signed_in: Vec::new(),
            portal_sessions: Vec::new(),
            page_viewstate,
            mode_delta,
            mode_viewstate,
        }));
        let shared = state.clone();
        let server = Server::start(Arc::new(move |req: &Request| {
            let mut state = shared.lock().expect("fake state");
            state.handle(req)
        }));
        FakePortal { server, state }
    }

    pub fn login_url(&self) -> String {
        self.server.url(&format!("{LOGIN_PATH}?{LOGIN_QUERY}"))
    }

    pub fn portal_url(&self) -> String {
        self.server.url(PORTAL_PREFIX)
    }

    pub fn seen<T>(&self, f: impl FnOnce(&Seen) -> T) -> T {
        f(&self.state.lock().expect("fake state").seen)
    }
}

fn new_cookie(prefix: &str, next: &mut u32) -> String {
    *next += 1;
    format!("{prefix}-{next}")
}

impl State {
    fn handle(&mut self, req: &Request) -> Response {
        if let Some(ua) = req.header("user-agent") {
            self.seen.user_agents.push(ua.to_string());
        }
        let path = req.path().to_string();
        match (req.method.as_str(), path.as_str()) {
            ("GET", LOGIN_PATH) => self.login_page(req),
            ("POST", LOGIN_PATH) => self.login_post(req),
            ("GET", "/nidp/app") => {
                Response::html("<html><body>Sesi&oacute;n iniciada</body></html>")
            }
            ("GET", WSFED_PATH) => self.wsfed(req),
            ("GET", PORTAL_PREFIX) => self.home(req),
            ("POST", PORTAL_PREFIX) => self.sign_in(req),
            (_, p) if p.starts_with(PORTAL_PREFIX) => {
                if !self.has_portal_session(req) {
                    self.seen
                        .refusals
                        .push(format!("no portal session for {p}"));
                    return Response::redirect(&format!("{LOGIN_PATH}?{LOGIN_QUERY}"));
                }
                let page = &p[PORTAL_PREFIX.len()..];
                match (req.method.as_str(), page) {
                    ("GET", "ConsultaReceptor.aspx" | "ConsultaEmisor.aspx") => {
                        Response::html(pages::query_page().0)
                    }
                    ("POST", "ConsultaReceptor.aspx" | "ConsultaEmisor.aspx") => {
                        self.postback(req, page)
                    }
                    ("GET", "RecuperaCfdi.aspx") => self.download(req, true),
                    ("GET", "RepresentacionImpresa.aspx") => self.download(req, false),
                    _ => Response::new(404, "text/html", "not found"),
                }
            }
            _ => Response::new(404, "text/html", "not found"),
        }
    }

    fn login_page(&mut self, req: &Request) -> Response {
        match self.setup.fault {
            Fault::LoginMaintenance => {
                return Response::html(
                    "<html><body><h1>Servicio en mantenimiento</h1></body></html>",
                )
            }
            Fault::LoginDown => return Response::new(503, "text/html", "<h1>503</h1>"),
            Fault::LoginHangs => {
                let mut r = Response::html("late");
                r.delay = Duration::from_secs(3);
                return r;
            }
            _ => {}
        }
        self.seen.captchas_served += 1;
        let answer = format!("C{:03}X", self.seen.captchas_served);
        // The IdP keeps its session in a cookie scoped to /nidp, like the real one.
        let session = req
            .cookie("JSESSIONID")
            .filter(|s| self.captcha_of.contains_key(s))
            .unwrap_or_else(|| new_cookie("idp", &mut self.next_id));
        self.captcha_of.insert(session.clone(), answer.clone());
        Response::html(pages::login_page(&answer))
            .with_cookie(&format!("JSESSIONID={session}; Path=/nidp; HttpOnly"))
    }

    fn login_post(&mut self, req: &Request) -> Response {
        self.seen.login_posts += 1;
        let expected = req
            .cookie("JSESSIONID")
            .and_then(|s| self.captcha_of.get(&s).cloned());
        let ok = expected.is_some()
            && req.field("userCaptcha") == expected
            && req.field("Ecom_User_ID").as_deref() == Some(self.setup.rfc.as_str())
            && req.field("Ecom_Password").as_deref() == Some(self.setup.password.as_str())
            && req.field("option").as_deref() == Some("credential")
            && req.field("submit").as_deref() == Some("Enviar");
        if !ok {
            // Wrong RFC, CIEC or captcha: the form again, with a fresh captcha.
            return self.login_page(req);
        }
        self.seen.logins_accepted += 1;
        let sso = new_cookie("sso", &mut self.next_id);
        self.signed_in.push(sso.clone());
        Response::redirect("/nidp/app?sid=0").with_cookie(&format!("SSO={sso}; Path=/"))
    }

    fn home(&mut self, req: &Request) -> Response {
        if self.has_portal_session(req) {
            return self.home_page();
        }
        if req
            .cookie("SSO")
            .is_some_and(|s| self.signed_in.contains(&s))
        {
            return Response::redirect(&format!("{WSFED_PATH}?{LOGIN_QUERY}"));
        }
        self.seen.refusals.push("portal home without SSO".into());
        Response::redirect(&format!("{LOGIN_PATH}?{LOGIN_QUERY}"))
    }

    fn wsfed(&mut self, req: &Request) -> Response {
        if !req
            .cookie("SSO")
            .is_some_and(|s| self.signed_in.contains(&s))
        {
            self.seen.refusals.push("wsfed without SSO".into());
            return Response::redirect(&format!("{LOGIN_PATH}?{LOGIN_QUERY}"));
        }
        Response::html(pages::recorded("sample-response-fiel-login-session.html"))
    }

    fn sign_in(&mut self, req: &Request) -> Response {
        let wresult = req.field("wresult").unwrap_or_default();
        let ok = req.field("wa").as_deref() == Some("wsignin1.0")
            && req.field("wctx").as_deref() == Some("rm=0&id=passive&ru=%2f")
            && wresult.starts_with("<wst:RequestSecurityTokenResponse")
            && wresult
                .trim_end()
                .ends_with("</wst:RequestSecurityTokenResponse>")
            && req
                .cookie("SSO")
                .is_some_and(|s| self.signed_in.contains(&s));
        if !ok {
            self.seen.refusals.push("bad WS-Fed post".into());
            return Response::new(400, "text/html", "bad sign-in");
        }
        self.seen.sign_ins += 1;
        let portal = new_cookie("portal", &mut self.next_id);
        self.portal_sessions.push(portal.clone());
        self.home_page()
            .with_cookie(&format!("ASP.NET_SessionId={portal}; Path=/; HttpOnly"))
    }

    fn home_page(&self) -> Response {
        if self.setup.fault == Fault::NoRfcOnHome {
            return Response::html("<html><body><p>Bienvenido</p></body></html>");
        }
        Response::html(format!(
            "<html><body><div id=\"ctl00_UpnlNombre\">RFC Autenticado: {}</div></body></html>",
            self.setup.rfc
        ))
    }

    fn has_portal_session(&self, req: &Request) -> bool {
        req.cookie("ASP.NET_SessionId")
            .is_some_and(|s| self.portal_sessions.contains(&s))
    }

    fn postback(&mut self, req: &Request, page: &str) -> Response {
        let delta = |s: String| Response::new(200, "text/plain; charset=utf-8", s);
        if req.header("x-microsoftajax") != Some("Delta=true") {
            self.seen
                .refusals
                .push("postback without the MS-Ajax header".into());
            return Response::new(500, "text/html", "not async");
        }
        let viewstate = req.field("__VIEWSTATE").unwrap_or_default();
        if req.field("ctl00$MainContent$BtnBusqueda").is_none() {
            // Mode selection: must carry the page's own state.
            let mode = req.field("__EVENTTARGET");
            let known = [
                "ctl00$MainContent$RdoFechas",
                "ctl00$MainContent$RdoFolioFiscal",
            ];
            if viewstate != self.page_viewstate
                || !mode.as_deref().is_some_and(|m| known.contains(&m))
                || mode
                    .as_deref()
                    .map(|m| m.trim_start_matches("ctl00$MainContent$"))
                    != req.field("ctl00$MainContent$FiltroCentral").as_deref()
            {
                self.seen
                    .refusals
                    .push("mode selection with the wrong state".into());
                return delta("1|#||4|26|error|500|Invalid postback or callback|".into());
            }
            return delta(self.mode_delta.clone());
        }
        // The search must carry the state the mode selection handed back.
        if viewstate != self.mode_viewstate {
            self.seen
                .refusals
                .push("search with the wrong state".into());
            return delta("1|#||4|5|error|500|state|".into());
        }
        // By folio fiscal: the page's invoice of that UUID, whatever its date.
        // (The page's form carries the field empty on a search by dates.)
        if let Some(uuid) = req
            .field("ctl00$MainContent$TxtUUID")
            .filter(|u| !u.trim().is_empty())
        {
            self.seen
                .folio_searches
                .push((page.to_string(), uuid.clone()));
            let rows: Vec<RowSpec> = (self.setup.invoices.iter())
                .filter(|i| i.row.uuid.eq_ignore_ascii_case(uuid.trim()))
                .map(|i| i.row.clone())
                .collect();
            return delta(pages::delta_with(
                &pages::results_table(&rows),
                "VS-after-search",
            ));
        }
        let Some((day, start, end)) = window_of(req, page) else {
            self.seen
                .refusals
                .push("search without date filters".into());
            return delta("1|#||4|5|error|500|dates|".into());
        };
        self.seen.searches.push((page.to_string(), day, start, end));
        if self.setup.fault == Fault::SearchWithoutTable {
            return delta(pages::delta_with(
                "<p>No hay resultados</p>",
                "VS-after-search",
            ));
        }
        if let Some(raw) = &self.setup.search_raw {
            return delta(raw.clone());
        }
        if let Some(html) = &self.setup.search_html {
            return delta(pages::delta_with(html, "VS-after-search"));
        }
        let mut hits: Vec<&FakeInvoice> = self
            .setup
            .invoices
            .iter()
            .filter(|i| {
                i.issued.date() == day
                    && (start..=end).contains(&i.issued.num_seconds_from_midnight())
            })
            .collect();
        hits.sort_by_key(|i| i.issued);
        hits.truncate(500); // the portal's cap
        let rows: Vec<RowSpec> = hits.iter().map(|i| i.row.clone()).collect();
        delta(pages::delta_with(
            &pages::results_table(&rows),
            "VS-after-search",
        ))
    }

    fn download(&mut self, req: &Request, xml: bool) -> Response {
        let token = req.query().strip_prefix("Datos=").unwrap_or("");
        self.seen.downloads.push(token.to_string());
        let found = self.setup.invoices.iter().find_map(|i| {
            if xml {
                (i.row.xml_token.as_deref() == Some(token)).then(|| i.xml.clone())
            } else {
                (i.row.pdf_token.as_deref() == Some(token)).then(|| i.pdf.clone())
            }
        });
        match found.flatten() {
            Some(body) if xml => Response::new(200, "text/xml", body),
            Some(body) => Response::new(200, "application/pdf", body),
            None => Response::new(404, "text/html", "<html>no existe</html>"),
        }
    }
}

/// The day and the seconds range a search asked for, read the way each page's filters
/// are laid out.
fn window_of(req: &Request, page: &str) -> Option<(NaiveDate, u32, u32)> {
    let num = |name: &str| -> Option<u32> { req.field(name)?.parse().ok() };
    let secs = |h: u32, m: u32, s: u32| h * 3600 + m * 60 + s;
    if page == "ConsultaReceptor.aspx" {
        let p = "ctl00$MainContent$CldFecha$";
        let day = NaiveDate::from_ymd_opt(
            num(&format!("{p}DdlAnio"))? as i32,
            num(&format!("{p}DdlMes"))?,
            num(&format!("{p}DdlDia"))?,
        )?;
        let start = secs(
            num(&format!("{p}DdlHora"))?,
            num(&format!("{p}DdlMinuto"))?,
            num(&format!("{p}DdlSegundo"))?,
        );
        let end = secs(
            num(&format!("{p}DdlHoraFin"))?,
            num(&format!("{p}DdlMinutoFin"))?,
            num(&format!("{p}DdlSegundoFin"))?,
        );
        return Some((day, start, end));
    }
    let date = |p: &str| {
        NaiveDate::parse_from_str(
            &req.field(&format!("ctl00$MainContent${p}$Calendario_text"))?,
            "%d/%m/%Y",
        )
        .ok()
    };
    let time = |p: &str| -> Option<u32> {
        let f = |n: &str| num(&format!("ctl00$MainContent${p}${n}"));
        Some(secs(f("DdlHora")?, f("DdlMinuto")?, f("DdlSegundo")?))
    };
    let day = date("CldFechaInicial2")?;
    (date("CldFechaFinal2")? == day).then_some(())?;
    Some((day, time("CldFechaInicial2")?, time("CldFechaFinal2")?))
}
