//! Settings of the portal connector, with the real SAT addresses as defaults.

use super::captcha::{AntiCaptchaResolver, CaptchaResolver, CommandResolver};
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// The CIEC login page (GET for the form and captcha, POST to log in); facts §1.
pub const SAT_LOGIN_URL: &str =
    "https://cfdiau.sat.gob.mx/nidp/app/login?id=SATUPCFDiCon&sid=0&option=credential&sid=0";
/// The CFDI portal home; the query pages and per-row resources are relative to it.
pub const SAT_PORTAL_URL: &str = "https://portalcfdi.facturaelectronica.sat.gob.mx/";
pub const ANTICAPTCHA_URL: &str = "https://api.anti-captcha.com";

/// What solves the login captcha.
#[derive(Clone, Default)]
pub enum CaptchaConfig {
    /// Nothing: every login fails `Unavailable` and says how to configure one.
    #[default]
    None,
    Command(CommandResolver),
    AntiCaptcha(Arc<AntiCaptchaResolver>),
    /// Any other resolver (an in-process model, tests).
    Resolver(Arc<dyn CaptchaResolver>),
}

impl std::fmt::Debug for CaptchaConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaptchaConfig::None => f.write_str("None"),
            CaptchaConfig::Command(c) => f.debug_tuple("Command").field(&c.program).finish(),
            CaptchaConfig::AntiCaptcha(a) => f.debug_tuple("AntiCaptcha").field(a).finish(),
            CaptchaConfig::Resolver(_) => f.write_str("Resolver(..)"),
        }
    }
}

impl CaptchaConfig {
    pub(super) fn resolver(&self) -> Option<Arc<dyn CaptchaResolver>> {
        match self {
            CaptchaConfig::None => None,
            CaptchaConfig::Command(c) => Some(Arc::new(c.clone())),
            CaptchaConfig::AntiCaptcha(a) => Some(a.clone()),
            CaptchaConfig::Resolver(r) => Some(r.clone()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct PortalConfig {
    pub login_url: Url,
    /// Base of `ConsultaEmisor.aspx`, `ConsultaReceptor.aspx` and `RecuperaCfdi.aspx`;
    /// also the portal home that receives the WS-Federation auto-post.
    pub portal_url: Url,
    /// For each HTTP exchange, redirects included.
    pub timeout: Duration,
    pub captcha: CaptchaConfig,
    /// Captchas fetched and tried per login attempt when the resolver fails.
    pub max_captcha_tries: u32,
    /// Login POSTs before a refusal counts as wrong credentials. Every refused try
    /// risks the taxpayer's CIEC lock-out, so keep it small.
    pub max_login_tries: u32,
    /// Parallel downloads within one session.
    pub download_concurrency: usize,
}

impl Default for PortalConfig {
    fn default() -> Self {
        Self {
            login_url: parse_default(SAT_LOGIN_URL),
            portal_url: parse_default(SAT_PORTAL_URL),
            timeout: Duration::from_secs(30),
            captcha: CaptchaConfig::None,
            max_captcha_tries: 3,
            max_login_tries: 3,
            download_concurrency: 4,
        }
    }
}

/// Only for the constants above, which a unit test parses.
fn parse_default(s: &str) -> Url {
    #[allow(clippy::expect_used)]
    Url::parse(s).expect("the built-in SAT URLs are valid")
}

impl PortalConfig {
    /// Builds the configuration from `serve`'s flags: `--sat-login-url`,
    /// `--sat-portal-url`, `--sat-timeout`, `--captcha-command "PROGRAM ARGS..."`
    /// (split on white space, no shell quoting: use a wrapper script for anything more),
    /// `--anticaptcha-url` and `--anticaptcha-key`. At most one resolver may be given.
    pub fn from_settings(
        login_url: Option<&str>,
        portal_url: Option<&str>,
        timeout: Duration,
        captcha_command: Option<&str>,
        anticaptcha_url: &str,
        anticaptcha_key: Option<&str>,
    ) -> Result<PortalConfig, String> {
        let defaults = PortalConfig::default();
        let login_url = match login_url {
            Some(s) => parse_url("--sat-login-url", s)?,
            None => defaults.login_url.clone(),
        };
        let portal_url = match portal_url {
            Some(s) => base_url(parse_url("--sat-portal-url", s)?),
            None => defaults.portal_url.clone(),
        };
        if timeout.is_zero() {
            return Err("--sat-timeout must be more than zero".into());
        }
        let command = captcha_command.map(str::trim).filter(|c| !c.is_empty());
        let key = anticaptcha_key.map(str::trim).filter(|k| !k.is_empty());
        let captcha = match (command, key) {
            (Some(_), Some(_)) => {
                return Err("give either --captcha-command or --anticaptcha-key, not both".into())
            }
            (Some(command), None) => {
                let mut words = command.split_whitespace().map(str::to_string);
                let program = words.next().unwrap_or_default();
                CaptchaConfig::Command(CommandResolver::new(program, words.collect()))
            }
            (None, Some(key)) => {
                parse_url("--anticaptcha-url", anticaptcha_url)?;
                CaptchaConfig::AntiCaptcha(Arc::new(AntiCaptchaResolver::new(anticaptcha_url, key)))
            }
            (None, None) => CaptchaConfig::None,
        };
        Ok(PortalConfig {
            login_url,
            portal_url,
            timeout,
            captcha,
            ..defaults
        })
    }
}

fn parse_url(flag: &str, s: &str) -> Result<Url, String> {
    let url = Url::parse(s.trim()).map_err(|e| format!("{flag}: invalid URL {s:?}: {e}"))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(format!("{flag}: unsupported scheme {other:?}")),
    }
}

/// Relative page names resolve against a directory, so the base must end with `/`.
fn base_url(mut url: Url) -> Url {
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_point_at_the_sat() {
        assert_eq!(
            Url::parse(SAT_LOGIN_URL).expect("valid").as_str(),
            SAT_LOGIN_URL
        );
        assert_eq!(
            Url::parse(SAT_PORTAL_URL).expect("valid").as_str(),
            SAT_PORTAL_URL
        );
        let c = PortalConfig::default();
        assert_eq!(c.login_url.as_str(), SAT_LOGIN_URL);
        assert_eq!(c.portal_url.as_str(), SAT_PORTAL_URL);
        assert_eq!((c.max_captcha_tries, c.max_login_tries), (3, 3));
        assert!(matches!(c.captcha, CaptchaConfig::None));
    }

    #[test]
    fn settings_pick_one_resolver_and_normalise_the_portal_base() {
        let t = Duration::from_secs(30);
        let c = PortalConfig::from_settings(
            Some("http://127.0.0.1:9/login?id=x"),
            Some("http://127.0.0.1:9/portal"),
            t,
            Some("  solve-captcha --model m.onnx "),
            ANTICAPTCHA_URL,
            None,
        )
        .expect("valid");
        assert_eq!(c.portal_url.as_str(), "http://127.0.0.1:9/portal/");
        assert_eq!(
            c.portal_url
                .join("ConsultaReceptor.aspx")
                .expect("joins")
                .as_str(),
            "http://127.0.0.1:9/portal/ConsultaReceptor.aspx"
        );
        match &c.captcha {
            CaptchaConfig::Command(cmd) => {
                assert_eq!(cmd.program, "solve-captcha");
                assert_eq!(cmd.args, ["--model", "m.onnx"]);
            }
            other => panic!("expected a command, got {other:?}"),
        }
        let a = PortalConfig::from_settings(None, None, t, None, ANTICAPTCHA_URL, Some("k"))
            .expect("valid");
        assert!(matches!(a.captcha, CaptchaConfig::AntiCaptcha(_)));
        assert!(!format!("{a:?}").contains("\"k\""));
        let none = PortalConfig::from_settings(None, None, t, Some(" "), ANTICAPTCHA_URL, None)
            .expect("valid");
        assert!(matches!(none.captcha, CaptchaConfig::None));
        assert!(
            PortalConfig::from_settings(None, None, t, Some("x"), ANTICAPTCHA_URL, Some("k"))
                .is_err()
        );
        assert!(PortalConfig::from_settings(
            Some("ftp://x/"),
            None,
            t,
            None,
            ANTICAPTCHA_URL,
            None
        )
        .is_err());
        assert!(PortalConfig::from_settings(
            None,
            Some("not a url"),
            t,
            None,
            ANTICAPTCHA_URL,
            None
        )
        .is_err());
        assert!(PortalConfig::from_settings(
            None,
            None,
            Duration::ZERO,
            None,
            ANTICAPTCHA_URL,
            None
        )
        .is_err());
    }
}
