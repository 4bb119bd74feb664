//! Reading the portal's pages: decoding, finding elements, and the form fields a browser
//! would submit. Everything walks the parsed HTML5 tree (html5ever via `scraper`); no
//! structure is ever pulled out with regexes.

use scraper::{ElementRef, Html};

/// Decodes a page body. The query pages declare `charset=utf-16`; some recordings really
/// are UTF-16 (with a byte-order mark) while the live portal sends UTF-8 (facts §4), so
/// the BOM decides and anything without one is read as UTF-8.
pub(super) fn decode(body: &[u8]) -> String {
    match body {
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8_lossy(rest).into_owned(),
        _ => String::from_utf8_lossy(body).into_owned(),
    }
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let units = bytes.chunks_exact(2).map(|p| unit([p[0], p[1]]));
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// The first element (in document order, `root` included) with this id.
pub(super) fn by_id<'a>(root: ElementRef<'a>, id: &str) -> Option<ElementRef<'a>> {
    root.descendent_elements()
        .find(|e| e.value().id() == Some(id))
}

/// Every element named `tag` under `root` (`root` included).
pub(super) fn elements<'a>(
    root: ElementRef<'a>,
    tag: &'a str,
) -> impl Iterator<Item = ElementRef<'a>> + 'a {
    root.descendent_elements()
        .filter(move |e| e.value().name() == tag)
}

/// The element's text with runs of white space (including `&nbsp;`) collapsed and trimmed.
pub(super) fn text_of(element: ElementRef<'_>) -> String {
    collapse_whitespace(&element.text().collect::<String>())
}

pub(super) fn collapse_whitespace(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c == '\u{a0}')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether some form control is named `name` (e.g. `Ecom_User_ID`, the login form).
pub(super) fn has_control(doc: &Html, name: &str) -> bool {
    doc.root_element()
        .descendent_elements()
        .any(|e| is_control(e) && e.value().attr("name") == Some(name))
}

fn is_control(e: ElementRef<'_>) -> bool {
    matches!(e.value().name(), "input" | "select" | "textarea" | "button")
}

/// Form fields in submission order; setting an existing name replaces its value, the way
/// later layers (mode selection, refreshed hidden fields, filters) override a page's form.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Fields(Vec<(String, String)>);

impl Fields {
    pub(super) fn set(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name.to_string(), value)),
        }
    }

    pub(super) fn extend<K: AsRef<str>, V: Into<String>>(
        &mut self,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) {
        for (name, value) in pairs {
            self.set(name.as_ref(), value);
        }
    }

    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

/// The fields of the controls under `form` as the portal expects them back: named inputs
/// except buttons (and checkboxes or radios only when checked), selects with their
/// selected option (empty when none is marked), and textareas. Disabled controls are
/// kept on purpose: the scraper the facts describe sends them and the portal accepts it.
pub(super) fn form_fields(form: ElementRef<'_>, exclude: impl Fn(&str) -> bool) -> Fields {
    let mut fields = Fields::default();
    for e in form.descendent_elements().filter(|e| is_control(*e)) {
        let el = e.value();
        let Some(name) = el.attr("name").filter(|n| !n.is_empty()) else {
            continue;
        };
        if exclude(name) {
            continue;
        }
        let value = match el.name() {
            "input" => {
                let kind = el.attr("type").unwrap_or("text").to_ascii_lowercase();
                match kind.as_str() {
                    "submit" | "reset" | "button" | "image" | "file" => continue,
                    "checkbox" | "radio" if el.attr("checked").is_none() => continue,
                    "checkbox" | "radio" => el.attr("value").unwrap_or("on").to_string(),
                    _ => el.attr("value").unwrap_or_default().to_string(),
                }
            }
            "select" => elements(e, "option")
                .find(|o| o.value().attr("selected").is_some())
                .map(|o| {
                    o.value()
                        .attr("value")
                        .map(str::to_string)
                        .unwrap_or_else(|| text_of(o))
                })
                .unwrap_or_default(),
            "textarea" => e.text().collect(),
            _ => continue, // <button>: never submitted here
        };
        fields.set(name, value);
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_pages_with_a_bom_decode_and_utf8_passes_through() {
        let text = "<p>Acción</p>";
        let mut be = vec![0xFE, 0xFF];
        be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
        let mut le = vec![0xFF, 0xFE];
        le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decode(&be), text);
        assert_eq!(decode(&le), text);
        assert_eq!(decode(text.as_bytes()), text);
        assert_eq!(decode(b"\xEF\xBB\xBFhola"), "hola");
    }

    #[test]
    fn form_fields_follow_browser_rules_for_buttons_checks_and_selects() {
        let doc = Html::parse_document(
            r#"<form id="f">
                <input type="hidden" name="a" value="1">
                <input name="plain" value="p">
                <input type="submit" name="go" value="Go">
                <input type="checkbox" name="off" value="x">
                <input type="radio" name="mode" value="one">
                <input type="radio" name="mode" value="two" checked>
                <input value="nameless">
                <select name="s"><option value="1">1</option><option value="2" selected>2</option></select>
                <select name="none"><option value="1">1</option></select>
                <textarea name="t">hi</textarea>
                <input type="hidden" name="skip-me" value="z">
            </form>"#,
        );
        let form = by_id(doc.root_element(), "f").expect("form");
        let fields = form_fields(form, |n| n.starts_with("skip"));
        let got: Vec<_> = fields.pairs().collect();
        assert_eq!(
            got,
            [
                ("a", "1"),
                ("plain", "p"),
                ("mode", "two"),
                ("s", "2"),
                ("none", ""),
                ("t", "hi")
            ]
        );
    }

    #[test]
    fn setting_a_field_replaces_it_in_place() {
        let mut f = Fields::default();
        f.set("a", "1");
        f.set("b", "2");
        f.set("a", "3");
        assert_eq!(f.pairs().collect::<Vec<_>>(), [("a", "3"), ("b", "2")]);
        assert_eq!(f.get("a"), Some("3"));
    }
}
