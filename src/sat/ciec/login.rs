//! The CIEC login (facts §2): login page -> captcha -> credential POST -> portal home ->
//! WS-Federation auto-post -> `RFC Autenticado: <RFC>`. The CIEC, the cookies and the
//! captcha answer are never logged.

use super::captcha::CaptchaResolver;
use super::config::PortalConfig;
use super::conversation::Credential;
use super::html::{by_id, elements, form_fields, has_control, text_of, Fields};
use super::http::{path_of, Client};
use crate::sat::SatError;
use base64::Engine as _;
use scraper::Html;

/// The field that marks the login form; seeing it again after the POST means "refused".
const USER_FIELD: &str = "Ecom_User_ID";

/// What a login page offers, read before anything is posted.
#[derive(Debug, PartialEq)]
pub(super) enum LoginPage {
    /// The form with its captcha image bytes.
    Form {
        captcha: Vec<u8>,
    },
    /// The form but no usable captcha image (the page changed, or maintenance).
    FormWithoutCaptcha,
    NotLogin,
}

pub(super) fn read_login_page(html: &str) -> LoginPage {
    let doc = Html::parse_document(html);
    if !has_control(&doc, USER_FIELD) {
        return LoginPage::NotLogin;
    }
    match captcha_image(&doc) {
        Some(captcha) => LoginPage::Form { captcha },
        None => LoginPage::FormWithoutCaptcha,
    }
}

pub(super) fn is_login_form(html: &str) -> bool {
    has_control(&Html::parse_document(html), USER_FIELD)
}

/// The inline `data:image/...;base64,` image in `#divCaptcha` (since January 2020).
fn captcha_image(doc: &Html) -> Option<Vec<u8>> {
    let div = by_id(doc.root_element(), "divCaptcha")?;
    let src = elements(div, "img").find_map(|img| img.value().attr("src"))?;
    let (head, data) = src.split_once(',')?;
    if !(head.starts_with("data:") && head.ends_with(";base64")) {
        return None;
    }
    let data: String = data.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()
        .filter(|bytes| !bytes.is_empty())
}

/// The WS-Federation form the portal home answers with after the login: all its inputs
/// (`wa`, `wresult`, `wctx`, and whatever else it carries).
pub(super) fn wsfed_form(html: &str) -> Option<Fields> {
    let doc = Html::parse_document(html);
    // Bound to a name so the iterator borrowing `doc` ends before `doc` does.
    let form = elements(doc.root_element(), "form")
        .map(|form| form_fields(form, |_| false))
        .find(|fields| fields.get("wresult").is_some());
    form
}

/// Whether the portal shows the session registered for `rfc`.
pub(super) fn rfc_authenticated(html: &str, rfc: &str) -> bool {
    // The facts' scraper matches the raw text; reading the page text also survives markup
    // or `&nbsp;` between the label and the RFC.
    if html.contains(&format!("RFC Autenticado: {}", rfc.trim())) {
        return true;
    }
    let doc = Html::parse_document(html);
    let text = text_of(doc.root_element()).to_ascii_uppercase();
    let wanted = format!("RFC AUTENTICADO: {}", rfc.trim().to_ascii_uppercase());
    text.contains(&wanted)
}

/// Logs `credential` in on `client`'s cookie jar, or says why not.
pub(super) fn login(
    client: &Client,
    config: &PortalConfig,
    resolver: &dyn CaptchaResolver,
    credential: &Credential,
) -> Result<(), SatError> {
    let tries = config.max_login_tries.max(1);
    let mut accepted = false;
    for attempt in 1..=tries {
        let captcha_answer = solve_captcha(client, config, resolver)?;
        let mut form = Fields::default();
        form.set(USER_FIELD, credential.tax_id.trim().to_ascii_uppercase());
        form.set("Ecom_Password", credential.password.as_str());
        form.set("option", "credential");
        form.set("submit", "Enviar");
        form.set("userCaptcha", captcha_answer);
        let answer = client.post_form(&config.login_url, &config.login_url, &form, "login")?;
        if !is_login_form(&answer) {
            accepted = true;
            break;
        }
        // Wrong RFC/CIEC and wrong captcha look the same: the form comes back.
        log::warn!(
            "portal: login for {} refused (attempt {attempt}/{tries})",
            credential.tax_id
        );
    }
    if !accepted {
        return Err(SatError::InvalidCredentials);
    }
    enter_portal(client, config, &credential.tax_id)
}

/// Fetches login pages until the resolver answers one captcha, up to the captcha tries.
fn solve_captcha(
    client: &Client,
    config: &PortalConfig,
    resolver: &dyn CaptchaResolver,
) -> Result<String, SatError> {
    let tries = config.max_captcha_tries.max(1);
    let mut last_error = String::new();
    for attempt in 1..=tries {
        let page = client.get_page(&config.login_url, "login page")?;
        let captcha = match read_login_page(&page) {
            LoginPage::Form { captcha } => captcha,
            LoginPage::FormWithoutCaptcha => {
                return Err(unrecognised(config, "the login form has no captcha image"))
            }
            LoginPage::NotLogin => {
                return Err(unrecognised(config, "the login page has no login form"))
            }
        };
        match resolver.resolve(&captcha) {
            Ok(answer) => return Ok(answer),
            Err(e) => {
                log::warn!("portal: captcha not solved (attempt {attempt}/{tries}): {e}");
                last_error = e.to_string();
            }
        }
    }
    Err(SatError::Unavailable(format!(
        "portal login: no captcha solved in {tries} tries: {last_error}"
    )))
}

/// After the login: the portal home answers with the WS-Fed auto-post form, whose inputs
/// go back to the portal home (not to the form's `action`, which names the real SAT host:
/// the configured portal stays the only place the session talks to).
fn enter_portal(client: &Client, config: &PortalConfig, rfc: &str) -> Result<(), SatError> {
    let home = client.get_page(&config.portal_url, "portal home")?;
    if rfc_authenticated(&home, rfc) {
        return Ok(());
    }
    let Some(form) = wsfed_form(&home) else {
        return Err(unrecognised_portal(
            config,
            "no WS-Federation form on the portal home",
        ));
    };
    let page = client.post_form(
        &config.portal_url,
        &config.portal_url,
        &form,
        "portal sign-in",
    )?;
    if rfc_authenticated(&page, rfc) {
        Ok(())
    } else {
        Err(unrecognised_portal(
            config,
            &format!("the portal did not show \"RFC Autenticado: {rfc}\""),
        ))
    }
}

fn unrecognised(config: &PortalConfig, what: &str) -> SatError {
    SatError::Unavailable(format!(
        "portal login ({}): {what}",
        path_of(&config.login_url)
    ))
}

fn unrecognised_portal(config: &PortalConfig, what: &str) -> SatError {
    SatError::Unavailable(format!(
        "portal sign-in ({}): {what}",
        path_of(&config.portal_url)
    ))
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
    fn the_recorded_login_page_has_the_form_and_an_inline_png_captcha() {
        let page = recorded("sample-response-ciec-login-form.html");
        assert!(is_login_form(&page));
        let LoginPage::Form { captcha } = read_login_page(&page) else {
            panic!("expected a login form with a captcha");
        };
        // Declared image/jpeg, really a PNG: the bytes go to the resolver untouched.
        assert!(captcha.starts_with(b"\x89PNG\r\n\x1a\n"), "PNG signature");
        assert!(captcha.len() > 1000);
    }

    #[test]
    fn a_login_form_without_a_captcha_and_other_pages_are_told_apart() {
        let page = recorded("sample-response-ciec-login-form.html");
        let doc = Html::parse_document(&page);
        let div = by_id(doc.root_element(), "divCaptcha").expect("captcha div");
        let without = page.replace(&div.html(), "<label id=\"divCaptcha\"></label>");
        assert_eq!(read_login_page(&without), LoginPage::FormWithoutCaptcha);
        let old_style = page.replace(
            &div.html(),
            "<div id=\"divCaptcha\"><img src=\"/nidp/jcaptcha.jpg\"></div>",
        );
        assert_eq!(read_login_page(&old_style), LoginPage::FormWithoutCaptcha);
        assert_eq!(
            read_login_page("<html><body>Mantenimiento</body></html>"),
            LoginPage::NotLogin
        );
        // Only a form control counts, not the name in a script or text.
        assert!(!is_login_form(
            "<p>Ecom_User_ID</p><script>var Ecom_User_ID;</script>"
        ));
    }

    #[test]
    fn the_recorded_wsfed_page_gives_all_its_inputs() {
        let page = recorded("sample-response-fiel-login-session.html");
        let form = wsfed_form(&page).expect("auto-post form");
        let names: Vec<&str> = form.pairs().map(|(n, _)| n).collect();
        assert_eq!(names, ["wa", "wresult", "wctx"]);
        assert_eq!(form.get("wa"), Some("wsignin1.0"));
        assert_eq!(
            form.get("wctx"),
            Some("rm=0&id=passive&ru=%2f"),
            "entities decoded"
        );
        let wresult = form.get("wresult").expect("wresult");
        assert!(
            wresult.starts_with("<wst:RequestSecurityTokenResponse"),
            "{}",
            &wresult[..40]
        );
        assert!(wsfed_form("<form><input name=\"x\" value=\"1\"></form>").is_none());
    }

    #[test]
    fn the_authenticated_rfc_is_found_in_the_page_text() {
        let page = "<div class=\"nombre\">RFC Autenticado:&nbsp;\n <b>aaa010101aaa</b></div>";
        assert!(rfc_authenticated(page, "AAA010101AAA"));
        assert!(!rfc_authenticated(page, "BBB010101BBB"));
        assert!(!rfc_authenticated("<p>Bienvenido</p>", "AAA010101AAA"));
    }
}
