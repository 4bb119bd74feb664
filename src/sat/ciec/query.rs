//! What one query asks the portal (facts §4): the page per direction, the fields of the
//! mode selection and of the search, and the time windows: one calendar day at a time,
//! halved while the portal answers with a full (500-row) table.

use crate::domain::extraction::{Direction, Period};
use chrono::NaiveDate;

/// The portal shows at most this many rows per query, however many match.
pub(super) const MAX_ROWS: usize = 500;
const LAST_SECOND: u32 = 86_399;

/// A query window within one day, in seconds since midnight, both ends included (the
/// portal's filters are inclusive to the second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    pub day: NaiveDate,
    pub start: u32,
    pub end: u32,
}

impl Window {
    pub(super) fn whole_day(day: NaiveDate) -> Self {
        Self {
            day,
            start: 0,
            end: LAST_SECOND,
        }
    }

    /// The two halves, or `None` for a one-second window.
    pub(super) fn halves(self) -> Option<(Window, Window)> {
        if self.start >= self.end {
            return None;
        }
        let mid = self.start + (self.end - self.start) / 2;
        Some((
            Window { end: mid, ..self },
            Window {
                start: mid + 1,
                ..self
            },
        ))
    }
}

/// `(hour, minute, second)` of a second of the day.
fn hms(second: u32) -> (u32, u32, u32) {
    (second / 3600, second / 60 % 60, second % 60)
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (h1, m1, s1) = hms(self.start);
        let (h2, m2, s2) = hms(self.end);
        write!(
            f,
            "{} {h1:02}:{m1:02}:{s1:02}..{h2:02}:{m2:02}:{s2:02}",
            self.day
        )
    }
}

/// The days of the period, both ends included.
pub(super) fn days(period: Period) -> impl Iterator<Item = NaiveDate> {
    period.from.iter_days().take_while(move |d| *d <= period.to)
}

/// Runs `query` over `window` and returns its items in time order. A window whose answer
/// has `MAX_ROWS` rows or more may be cut short by the portal, so it is dropped and its
/// halves are queried instead, down to one second; a one-second window that is still full
/// is kept as it is and reported to `on_capped` (the portal offers no finer filter).
/// `query` returns the items and the number of rows the portal showed.
pub(super) fn split_while_full<T, E>(
    window: Window,
    mut query: impl FnMut(Window) -> Result<(Vec<T>, usize), E>,
    mut on_capped: impl FnMut(Window),
) -> Result<Vec<T>, E> {
    let mut out = Vec::new();
    // Depth first, earlier half first: the answer stays in time order.
    let mut todo = vec![window];
    while let Some(w) = todo.pop() {
        let (items, rows) = query(w)?;
        if rows >= MAX_ROWS {
            if let Some((first, second)) = w.halves() {
                todo.push(second);
                todo.push(first);
                continue;
            }
            on_capped(w);
        }
        out.extend(items);
    }
    Ok(out)
}

pub(super) fn page_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Issued => "ConsultaEmisor.aspx",
        Direction::Received => "ConsultaReceptor.aspx",
    }
}

/// Inputs of the query page that are not sent back: its buttons and "select all".
pub(super) fn excluded_from_page(name: &str) -> bool {
    name.starts_with("ctl00$MainContent$Btn") || name == "seleccionador"
}

/// How the page searches (facts §4): by dates, or by folio fiscal (one UUID).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Dates,
    Folio,
}

/// The async postback that switches the page to `mode`.
pub(super) fn mode_fields(mode: Mode) -> [(&'static str, &'static str); 6] {
    let (target, radio, manager) = match mode {
        Mode::Dates => (
            "ctl00$MainContent$RdoFechas",
            "RdoFechas",
            "ctl00$MainContent$UpnlBusqueda|ctl00$MainContent$RdoFechas",
        ),
        Mode::Folio => (
            "ctl00$MainContent$RdoFolioFiscal",
            "RdoFolioFiscal",
            "ctl00$MainContent$UpnlBusqueda|ctl00$MainContent$RdoFolioFiscal",
        ),
    };
    [
        ("__ASYNCPOST", "true"),
        ("__EVENTARGUMENT", ""),
        ("__EVENTTARGET", target),
        ("__LASTFOCUS", ""),
        ("ctl00$MainContent$FiltroCentral", radio),
        ("ctl00$ScriptManager1", manager),
    ]
}

/// The search by folio fiscal: one UUID, no other filter (the portal ignores them).
pub(super) fn folio_fields(uuid: &str) -> Vec<(&'static str, String)> {
    vec![
        ("ctl00$MainContent$BtnBusqueda", "Buscar CFDI".to_string()),
        ("ctl00$MainContent$TxtUUID", uuid.to_string()),
    ]
}

/// The search: every state (vigentes and cancelados, so cancellations reach the
/// service), any complement, no counterpart filters, and the window's dates.
pub(super) fn search_fields(direction: Direction, w: Window) -> Vec<(&'static str, String)> {
    let mut fields = vec![
        ("ctl00$MainContent$BtnBusqueda", "Buscar CFDI".to_string()),
        ("ctl00$MainContent$DdlEstadoComprobante", "-1".to_string()),
        ("ctl00$MainContent$ddlComplementos", "-1".to_string()),
        ("ctl00$MainContent$TxtRfcReceptor", String::new()),
        ("ctl00$MainContent$TxtRfcTercero", String::new()),
    ];
    let (h1, m1, s1) = hms(w.start);
    let (h2, m2, s2) = hms(w.end);
    let year = w.day.format("%Y").to_string();
    match direction {
        // A date-time range; the library keeps both ends on the same day.
        Direction::Issued => {
            let date = w.day.format("%d/%m/%Y").to_string();
            fields.extend([
                ("ctl00$MainContent$hfInicial", year.clone()),
                (
                    "ctl00$MainContent$CldFechaInicial2$Calendario_text",
                    date.clone(),
                ),
                ("ctl00$MainContent$CldFechaInicial2$DdlHora", h1.to_string()),
                (
                    "ctl00$MainContent$CldFechaInicial2$DdlMinuto",
                    m1.to_string(),
                ),
                (
                    "ctl00$MainContent$CldFechaInicial2$DdlSegundo",
                    s1.to_string(),
                ),
                ("ctl00$MainContent$hfFinal", year),
                ("ctl00$MainContent$CldFechaFinal2$Calendario_text", date),
                ("ctl00$MainContent$CldFechaFinal2$DdlHora", h2.to_string()),
                ("ctl00$MainContent$CldFechaFinal2$DdlMinuto", m2.to_string()),
                (
                    "ctl00$MainContent$CldFechaFinal2$DdlSegundo",
                    s2.to_string(),
                ),
            ]);
        }
        // One day: year, unpadded month, two-digit day, then an hour range within it.
        Direction::Received => fields.extend([
            ("ctl00$MainContent$CldFecha$DdlAnio", year),
            (
                "ctl00$MainContent$CldFecha$DdlMes",
                w.day.format("%-m").to_string(),
            ),
            (
                "ctl00$MainContent$CldFecha$DdlDia",
                w.day.format("%d").to_string(),
            ),
            ("ctl00$MainContent$CldFecha$DdlHora", h1.to_string()),
            ("ctl00$MainContent$CldFecha$DdlMinuto", m1.to_string()),
            ("ctl00$MainContent$CldFecha$DdlSegundo", s1.to_string()),
            ("ctl00$MainContent$CldFecha$DdlHoraFin", h2.to_string()),
            ("ctl00$MainContent$CldFecha$DdlMinutoFin", m2.to_string()),
            ("ctl00$MainContent$CldFecha$DdlSegundoFin", s2.to_string()),
        ]),
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).expect("date")
    }

    #[test]
    fn the_folio_search_switches_to_its_mode_and_sends_only_the_uuid() {
        let get = |mode| {
            let fields = mode_fields(mode);
            let value = |name: &str| fields.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
            (
                value("__EVENTTARGET"),
                value("ctl00$MainContent$FiltroCentral"),
                value("ctl00$ScriptManager1"),
            )
        };
        assert_eq!(
            get(Mode::Folio),
            (
                Some("ctl00$MainContent$RdoFolioFiscal"),
                Some("RdoFolioFiscal"),
                Some("ctl00$MainContent$UpnlBusqueda|ctl00$MainContent$RdoFolioFiscal")
            )
        );
        assert_eq!(get(Mode::Dates).1, Some("RdoFechas"));
        let uuid = "70A17DCA-B359-4483-8B50-854F9433E42D";
        let names: Vec<&str> = folio_fields(uuid).iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            ["ctl00$MainContent$BtnBusqueda", "ctl00$MainContent$TxtUUID"]
        );
        assert_eq!(folio_fields(uuid)[1].1, uuid);
    }

    #[test]
    fn windows_halve_down_to_one_second() {
        let w = Window::whole_day(day(2024, 1, 5));
        let (a, b) = w.halves().expect("halves");
        assert_eq!(
            (a.start, a.end, b.start, b.end),
            (0, 43_199, 43_200, 86_399)
        );
        let two = Window {
            start: 10,
            end: 11,
            ..w
        };
        let (x, y) = two.halves().expect("halves");
        assert_eq!((x.start, x.end, y.start, y.end), (10, 10, 11, 11));
        assert_eq!(x.halves(), None);
        assert_eq!(w.to_string(), "2024-01-05 00:00:00..23:59:59");
    }

    #[test]
    fn the_period_is_walked_day_by_day() {
        let p = Period {
            from: day(2024, 2, 28),
            to: day(2024, 3, 1),
        };
        let got: Vec<_> = days(p).collect();
        assert_eq!(got, [day(2024, 2, 28), day(2024, 2, 29), day(2024, 3, 1)]);
    }

    /// A fake portal day: invoices at the given seconds, at most MAX_ROWS shown.
    fn portal(seconds: &[u32]) -> impl FnMut(Window) -> Result<(Vec<u32>, usize), ()> + '_ {
        move |w| {
            let hits: Vec<u32> = seconds
                .iter()
                .copied()
                .filter(|s| (w.start..=w.end).contains(s))
                .collect();
            let shown: Vec<u32> = hits.into_iter().take(MAX_ROWS).collect();
            let n = shown.len();
            Ok((shown, n))
        }
    }

    #[test]
    fn full_windows_are_split_until_every_answer_fits() {
        // 1,200 invoices over the morning: the whole day and its first half come back full.
        let seconds: Vec<u32> = (0..1200).map(|i| i * 30).collect();
        let mut queried = Vec::new();
        let mut capped = Vec::new();
        let w = Window::whole_day(day(2024, 1, 5));
        let got = split_while_full(
            w,
            |w| {
                queried.push(w);
                portal(&seconds)(w)
            },
            |w| capped.push(w),
        )
        .expect("ok");
        assert_eq!(got, seconds, "every invoice once, in time order");
        assert!(capped.is_empty());
        assert_eq!(queried[0], w);
        assert!(queried.len() > 3, "the day was split: {queried:?}");
    }

    #[test]
    fn a_full_single_second_is_kept_and_reported() {
        let seconds: Vec<u32> = vec![3600; 600]; // 600 invoices in the same second
        let mut capped = Vec::new();
        let got = split_while_full(Window::whole_day(day(2024, 1, 5)), portal(&seconds), |w| {
            capped.push(w)
        })
        .expect("ok");
        assert_eq!(got.len(), MAX_ROWS, "what the portal showed is kept");
        assert_eq!(capped.len(), 1);
        assert_eq!((capped[0].start, capped[0].end), (3600, 3600));
    }

    #[test]
    fn a_failing_query_stops_the_walk() {
        let mut calls = 0;
        let got: Result<Vec<u32>, &str> = split_while_full(
            Window::whole_day(day(2024, 1, 5)),
            |_| {
                calls += 1;
                if calls == 1 {
                    Ok((vec![], MAX_ROWS))
                } else {
                    Err("down")
                }
            },
            |_| {},
        );
        assert_eq!(got, Err("down"));
        assert_eq!(calls, 2);
    }

    #[test]
    fn search_fields_carry_each_directions_date_filters() {
        let w = Window {
            day: day(2024, 3, 7),
            start: 3_723,
            end: 86_399,
        };
        let issued: Vec<_> = search_fields(Direction::Issued, w);
        let get =
            |f: &[(&str, String)], k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
        assert_eq!(
            get(
                &issued,
                "ctl00$MainContent$CldFechaInicial2$Calendario_text"
            )
            .as_deref(),
            Some("07/03/2024")
        );
        assert_eq!(
            get(&issued, "ctl00$MainContent$CldFechaInicial2$DdlHora").as_deref(),
            Some("1")
        );
        assert_eq!(
            get(&issued, "ctl00$MainContent$CldFechaInicial2$DdlMinuto").as_deref(),
            Some("2")
        );
        assert_eq!(
            get(&issued, "ctl00$MainContent$CldFechaInicial2$DdlSegundo").as_deref(),
            Some("3")
        );
        assert_eq!(
            get(&issued, "ctl00$MainContent$CldFechaFinal2$DdlHora").as_deref(),
            Some("23")
        );
        assert_eq!(
            get(&issued, "ctl00$MainContent$DdlEstadoComprobante").as_deref(),
            Some("-1")
        );
        let received = search_fields(Direction::Received, w);
        assert_eq!(
            get(&received, "ctl00$MainContent$CldFecha$DdlAnio").as_deref(),
            Some("2024")
        );
        assert_eq!(
            get(&received, "ctl00$MainContent$CldFecha$DdlMes").as_deref(),
            Some("3")
        );
        assert_eq!(
            get(&received, "ctl00$MainContent$CldFecha$DdlDia").as_deref(),
            Some("07")
        );
        assert_eq!(
            get(&received, "ctl00$MainContent$CldFecha$DdlSegundoFin").as_deref(),
            Some("59")
        );
        assert_eq!(
            get(&received, "ctl00$MainContent$BtnBusqueda").as_deref(),
            Some("Buscar CFDI")
        );
        assert!(get(&received, "ctl00$MainContent$CldFechaInicial2$DdlHora").is_none());
        assert_eq!(page_name(Direction::Issued), "ConsultaEmisor.aspx");
        assert_eq!(page_name(Direction::Received), "ConsultaReceptor.aspx");
        assert!(excluded_from_page("ctl00$MainContent$BtnBusqueda"));
        assert!(excluded_from_page("seleccionador"));
        assert!(!excluded_from_page("__VIEWSTATE"));
    }
}
