//! The recorded SAT pages, and pages templated from them: login forms with a captcha we
//! choose, result tables built from the recorded row markup, and exact MS-Ajax deltas.

use base64::Engine as _;

pub const RECORDED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sat-portal-pages/"
);

pub fn recorded_bytes(name: &str) -> Vec<u8> {
    std::fs::read(format!("{RECORDED}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn recorded(name: &str) -> String {
    String::from_utf8(recorded_bytes(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `text` between `start` and the next `end`, both excluded.
pub fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{start:?} not found"))
        + start.len();
    let len = text[from..]
        .find(end)
        .unwrap_or_else(|| panic!("{end:?} not found"));
    &text[from..from + len]
}

/// What the fake captcha images contain: the answer in clear, so a script can "solve" it.
pub fn captcha_image(answer: &str) -> Vec<u8> {
    format!("captcha:{answer}").into_bytes()
}

/// The recorded CIEC login form with its inline image replaced by one of ours.
pub fn login_page(answer: &str) -> String {
    let page = recorded("sample-response-ciec-login-form.html");
    let original = between(&page, "src=\"data:image/jpeg;base64,", "\"");
    let ours = base64::engine::general_purpose::STANDARD.encode(captcha_image(answer));
    page.replace(original, &ours)
}

/// The recorded query page (UTF-16 with a BOM, as recorded) and its `__VIEWSTATE`.
pub fn query_page() -> (Vec<u8>, String) {
    let bytes = recorded_bytes("sample-response-receiver-form-page.html");
    let units: Vec<u16> = bytes[2..]
        .chunks_exact(2)
        .map(|p| u16::from_be_bytes([p[0], p[1]]))
        .collect();
    let text = String::from_utf16(&units).expect("UTF-16 page");
    let viewstate = between(&text, "id=\"__VIEWSTATE\" value=\"", "\"").to_string();
    (bytes, viewstate)
}

/// The recorded answer to "search by dates" and the `__VIEWSTATE` it hands back.
pub fn mode_delta() -> (String, String) {
    let delta = recorded("sample-response-receiver-using-filters-initial.html");
    let viewstate = between(&delta, "|hiddenField|__VIEWSTATE|", "|").to_string();
    (delta, viewstate)
}

/// An exact delta (lengths in UTF-16 units) carrying `html` in the results panel.
pub fn delta_with(html: &str, viewstate: &str) -> String {
    let record = |kind: &str, id: &str, content: &str| {
        format!("{}|{kind}|{id}|{content}|", content.encode_utf16().count())
    };
    [
        record("#", "", "4"),
        record("updatePanel", "ctl00_MainContent_UpnlResultados", html),
        record("hiddenField", "__EVENTTARGET", ""),
        record("hiddenField", "__EVENTARGUMENT", ""),
        record("hiddenField", "__VIEWSTATE", viewstate),
        record("pageTitle", "", "Portal Contribuyentes CFDI | Buscar CFDI"),
    ]
    .concat()
}

/// One row of a templated results table.
#[derive(Debug, Clone)]
pub struct RowSpec {
    pub uuid: String,
    pub issuer: String,
    pub issuer_name: String,
    pub receiver: String,
    pub receiver_name: String,
    pub issued_at: String,
    pub total: String,
    pub effect: String,
    pub state: String,
    pub xml_token: Option<String>,
    pub pdf_token: Option<String>,
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The recorded table's opening and header row, and its first data row.
fn table_template() -> (String, String) {
    let page = recorded("sample-to-extract-metadata-one-cfdi.html");
    let table = page
        .find("<table id=\"ctl00_MainContent_tblResult\"")
        .expect("table");
    let header_end = table + page[table..].find("</tr>").expect("header") + 5;
    let row = header_end + page[header_end..].find("<tr>").expect("row");
    let nested = row + page[row..].find("</table></div></td>").expect("actions");
    let row_end = nested + page[nested..].find("</tr>").expect("row end") + 5;
    (
        page[table..header_end].to_string(),
        page[row..row_end].to_string(),
    )
}

/// Cuts `<span id="ID" ...` up to `end` (inclusive) out of `row`: a missing button.
fn without_button(row: &str, id: &str, end: &str) -> String {
    let start = row.find(&format!("<span id=\"{id}\"")).expect("button");
    let stop = start + row[start..].find(end).expect("button end") + end.len();
    format!("{}{}", &row[..start], &row[stop..])
}

/// A results table shaped like the recorded one, one templated row per spec.
pub fn results_table(rows: &[RowSpec]) -> String {
    let (head, template) = table_template();
    let xml = between(&template, "RecuperaCfdi.aspx?Datos=", "'");
    let pdf = between(&template, "recuperaRepresentacionImpresa('", "'");
    let mut out = head;
    for spec in rows {
        let mut row = template
            .replace("B97262E5-704C-4BF7-AE26-9174FEF04D63", &spec.uuid)
            .replace("BSM970519DU8", &spec.issuer)
            .replace(
                "BANCO SANTANDER MEXICO, SA INSTITUCION DE BANCA MULTIPLE, GRUPO FINANCIERO SANTANDER MEXICO",
                &escape(&spec.issuer_name),
            )
            .replace("AUAC920422D38", &spec.receiver)
            .replace("CESAR RENE AGUILERA ARREOLA", &escape(&spec.receiver_name))
            .replace("2019-03-31T02:04:46", &spec.issued_at)
            .replace(">$0.00<", &format!(">{}<", spec.total))
            .replace(">Ingreso<", &format!(">{}<", spec.effect))
            .replace(">Vigente<", &format!(">{}<", spec.state));
        row = match &spec.xml_token {
            Some(token) => row.replace(xml, token),
            None => without_button(&row, "BtnDescarga", "</span>"),
        };
        row = match &spec.pdf_token {
            Some(token) => row.replace(pdf, token),
            None => without_button(&row, "BtnRI", "/>"),
        };
        out.push_str(&row);
    }
    out.push_str("</table>");
    out
}
