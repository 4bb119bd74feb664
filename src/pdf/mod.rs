//! Printed representations (representación impresa) of invoices: US Letter pages
//! written with pdf-writer in the standard Helvetica fonts with WinAnsiEncoding (so
//! accents and Ñ print without embedding a font). Content streams are left
//! uncompressed: the output is deterministic and its text can be searched.
//!
//! [`Canvas`] lays text out from the top of a page down and starts a new page when one
//! is full, wrapping each line to its column with Adobe's metrics of the two fonts
//! ([`Font::fit`]), so nothing runs past the margin; [`invoice`] renders a parsed
//! CFDI and [`retention`] a CFDI de Retenciones, as Mexico prints them (`text`: amounts
//! with `$` and separators, dates day first, each SAT code with its catalog's
//! description, totals in words); the sandbox renders its own invoices.

pub mod invoice;
mod qr;
pub mod retention;
mod stamp;
mod text;
pub mod verification;

use std::sync::LazyLock;

use chrono::{Datelike, NaiveDateTime, Timelike};
use pdf_canvas::{BuiltinFont, FontMetrics, FontSource};
use pdf_writer::{Content, Date, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

pub const PAGE_WIDTH: f32 = 612.0;
pub const PAGE_HEIGHT: f32 = 792.0;
pub const LEFT: f32 = 40.0;
pub const RIGHT: f32 = PAGE_WIDTH - 40.0;
const TOP: f32 = PAGE_HEIGHT - 48.0;
const BOTTOM: f32 = 40.0;

const CATALOG: Ref = Ref::new(1);
const PAGES: Ref = Ref::new(2);
const REGULAR: Ref = Ref::new(3);
const BOLD: Ref = Ref::new(4);
const INFO: Ref = Ref::new(5);
/// Pages take two objects each (page, content) from here on.
const FIRST_PAGE: i32 = 6;

#[derive(Clone, Copy)]
pub enum Font {
    Regular,
    Bold,
}

/// Adobe's advance widths (1/1000 em) of Helvetica and Helvetica-Bold, indexed by
/// WinAnsi code: a table, since every character of every line is measured.
static WIDTHS: LazyLock<[[u16; 256]; 2]> =
    LazyLock::new(|| [BuiltinFont::Helvetica, BuiltinFont::Helvetica_Bold].map(widths));

fn widths(font: BuiltinFont) -> [u16; 256] {
    let metrics: FontMetrics = font.get_metrics();
    // Every byte `win_ansi` yields has a glyph; the fallback is the widest one.
    std::array::from_fn(|code| metrics.get_width(code as u8).unwrap_or(1000))
}

impl Font {
    fn name(self) -> Name<'static> {
        match self {
            Font::Regular => Name(b"F1"),
            Font::Bold => Name(b"F2"),
        }
    }

    /// Width of `text` in points at `size`: the sum of the advance widths of the
    /// WinAnsi bytes the page shows.
    pub fn width(self, size: f32, text: &str) -> f32 {
        points(self.text_units(text), size)
    }

    /// Advance width of `text` in 1/1000 em.
    fn text_units(self, text: &str) -> u32 {
        text.chars().map(|c| self.units(win_ansi_byte(c))).sum()
    }

    /// Advance width of one WinAnsi byte in 1/1000 em.
    fn units(self, byte: u8) -> u32 {
        u32::from(WIDTHS[self as usize][usize::from(byte)])
    }

    /// `text` in lines no wider than `width` points at `size`: broken at spaces where
    /// it can be, inside a word (a seal, a name without spaces) where it must. Always
    /// at least one line; a line holds at least one character.
    pub fn fit(self, size: f32, text: &str, width: f32) -> Vec<String> {
        let fits = |units: u32| points(units, size) <= width;
        let space = self.units(b' ');
        let mut lines = Vec::new();
        let mut line = String::new();
        let mut line_units = 0;
        for word in text.split(' ') {
            let word_units = self.text_units(word);
            let joined = if line.is_empty() {
                word_units
            } else {
                line_units + space + word_units
            };
            if fits(joined) {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
                line_units = joined;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            let mut rest = word;
            let mut rest_units = word_units;
            while !fits(rest_units) {
                let (cut, cut_units) = self.prefix_fitting(size, rest, width);
                lines.push(rest[..cut].to_owned());
                rest = &rest[cut..];
                rest_units -= cut_units;
            }
            line = rest.to_owned();
            line_units = rest_units;
        }
        if !line.is_empty() || lines.is_empty() {
            lines.push(line);
        }
        lines
    }

    /// Byte length and width in 1/1000 em of the longest prefix of `text` no wider
    /// than `width` (at least its first character, so breaking always advances).
    fn prefix_fitting(self, size: f32, text: &str, width: f32) -> (usize, u32) {
        let mut units = 0;
        let mut end = 0;
        for (at, c) in text.char_indices() {
            let next = units + self.units(win_ansi_byte(c));
            if points(next, size) > width && at > 0 {
                break;
            }
            units = next;
            end = at + c.len_utf8();
        }
        (end, units)
    }
}

/// 1/1000 em at `size` in points.
fn points(units: u32, size: f32) -> f32 {
    units as f32 * size / 1000.0
}

/// `text` in WinAnsiEncoding: Latin-1 letters map to themselves, anything
/// else the standard fonts cannot show becomes '?'.
pub fn win_ansi(text: &str) -> Vec<u8> {
    text.chars().map(win_ansi_byte).collect()
}

fn win_ansi_byte(c: char) -> u8 {
    match u32::from(c) {
        code @ (0x20..=0x7e | 0xa0..=0xff) => code as u8,
        _ => b'?',
    }
}

/// The document information dictionary of a rendered PDF.
pub struct Info<'a> {
    pub title: &'a str,
    pub producer: &'a str,
    pub created: Option<NaiveDateTime>,
}

/// Pages being laid out from the top down.
pub struct Canvas {
    done: Vec<Vec<u8>>,
    content: Content,
    pub y: f32,
}

impl Default for Canvas {
    fn default() -> Self {
        Canvas {
            done: Vec::new(),
            content: Content::new(),
            y: TOP,
        }
    }
}

impl Canvas {
    pub fn text(&mut self, font: Font, size: f32, x: f32, text: &str) {
        self.content
            .begin_text()
            .set_font(font.name(), size)
            .next_line(x, self.y)
            .show(Str(&win_ansi(text)))
            .end_text();
    }

    pub fn text_right(&mut self, font: Font, size: f32, right: f32, text: &str) {
        self.text(font, size, right - font.width(size, text), text);
    }

    /// A paragraph from `x` to the right margin, wrapped to fit (see [`Font::fit`]),
    /// each line then down by its height; a full page continues on the next.
    pub fn paragraph(&mut self, font: Font, size: f32, x: f32, text: &str) {
        for line in font.fit(size, text, RIGHT - x) {
            self.room(size + 4.0);
            self.text(font, size, x, &line);
            self.down(size + 4.0);
        }
    }

    /// A paragraph at the left margin.
    pub fn line(&mut self, font: Font, size: f32, text: &str) {
        self.paragraph(font, size, LEFT, text);
    }

    pub fn down(&mut self, by: f32) {
        self.y -= by;
    }

    /// Starts a new page unless `height` more points fit on this one.
    pub fn room(&mut self, height: f32) {
        if self.y - height < BOTTOM {
            let full = std::mem::replace(&mut self.content, Content::new());
            self.done.push(full.finish());
            self.y = TOP;
        }
    }

    pub fn rule(&mut self) {
        self.content
            .set_line_width(0.5)
            .move_to(LEFT, self.y)
            .line_to(RIGHT, self.y)
            .stroke();
        self.down(12.0);
    }

    /// The header of an items table: the left edges of quantity, key, unit and
    /// description, and the right edge of the unit value (the amount ends at `RIGHT`).
    pub fn items_header(&mut self, columns: [f32; 4], price_right: f32) {
        let labels = ["Cantidad", "Clave", "Unidad", "Descripción"];
        for (x, label) in columns.into_iter().zip(labels) {
            self.text(Font::Bold, 8.0, x, label);
        }
        self.text_right(Font::Bold, 8.0, price_right, "Valor unitario");
        self.text_right(Font::Bold, 8.0, RIGHT, "Importe");
        self.down(14.0);
    }

    /// A filled black square with its lower left corner at (x, y).
    fn square(&mut self, x: f32, y: f32, side: f32) {
        self.content.rect(x, y, side, side);
    }

    fn fill(&mut self) {
        self.content.fill_nonzero();
    }

    /// The finished document: every page with both fonts, then `info`.
    pub fn finish(mut self, info: &Info) -> Vec<u8> {
        self.done.push(self.content.finish());
        let page_refs: Vec<(Ref, Ref)> = (0..self.done.len() as i32)
            .map(|i| {
                let page = FIRST_PAGE + 2 * i;
                (Ref::new(page), Ref::new(page + 1))
            })
            .collect();
        let mut pdf = Pdf::new();
        pdf.catalog(CATALOG).pages(PAGES);
        pdf.pages(PAGES)
            .kids(page_refs.iter().map(|(page, _)| *page))
            .count(page_refs.len() as i32);
        for ((page_ref, content_ref), content) in page_refs.iter().zip(&self.done) {
            let mut page = pdf.page(*page_ref);
            page.parent(PAGES)
                .media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT))
                .contents(*content_ref);
            page.resources()
                .fonts()
                .pair(Font::Regular.name(), REGULAR)
                .pair(Font::Bold.name(), BOLD);
            page.finish();
            pdf.stream(*content_ref, content);
        }
        for (id, base) in [(REGULAR, "Helvetica"), (BOLD, "Helvetica-Bold")] {
            pdf.type1_font(id)
                .base_font(Name(base.as_bytes()))
                .encoding_predefined(Name(b"WinAnsiEncoding"));
        }
        let mut dict = pdf.document_info(INFO);
        dict.title(TextStr(info.title))
            .producer(TextStr(info.producer));
        if let Some(at) = info.created {
            dict.creation_date(pdf_date(at));
        }
        dict.finish();
        pdf.finish()
    }
}

fn pdf_date(at: NaiveDateTime) -> Date {
    // Components are in range by construction; years past u16 cannot be written.
    let year = u16::try_from(at.year()).unwrap_or(u16::MAX);
    let two = |n: u32| u8::try_from(n).unwrap_or(0);
    Date::new(year)
        .month(two(at.month()))
        .day(two(at.day()))
        .hour(two(at.hour()))
        .minute(two(at.minute()))
        .second(two(at.second()))
}

/// Checks the header, trailer, and that every xref entry points at its object.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn check_structure(pdf: &[u8]) {
    assert!(pdf.starts_with(b"%PDF-1."));
    let text = String::from_utf8_lossy(pdf);
    assert!(text.trim_end().ends_with("%%EOF"));
    let startxref: usize = text
        .rsplit("startxref")
        .next()
        .and_then(|tail| tail.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(pdf[startxref..].starts_with(b"xref"));
    let xref = String::from_utf8_lossy(&pdf[startxref..]);
    let mut lines = xref.lines().skip(1);
    let header: Vec<usize> = lines
        .next()
        .unwrap()
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(header[0], 0);
    for (id, entry) in lines.take(header[1]).enumerate() {
        let fields: Vec<&str> = entry.split_whitespace().collect();
        if fields[2] == "n" {
            let offset: usize = fields[0].parse().unwrap();
            assert!(
                pdf[offset..].starts_with(format!("{id} 0 obj").as_bytes()),
                "object {id}"
            );
        }
    }
    for key in [
        "/Type /Catalog",
        "/Type /Page",
        "/BaseFont /Helvetica",
        "/WinAnsiEncoding",
    ] {
        assert!(text.contains(key), "{key}");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_full_page_continues_on_a_new_one() {
        let mut canvas = Canvas::default();
        for n in 0..200 {
            canvas.line(Font::Regular, 9.0, &format!("line {n}"));
        }
        let pdf = canvas.finish(&Info {
            title: "t",
            producer: "p",
            created: None,
        });
        check_structure(&pdf);
        let text = String::from_utf8_lossy(&pdf);
        // 54 lines of 13 points fit between the margins.
        assert!(text.contains("/Count 4"), "200 lines need 4 pages");
        assert!(text.contains("(line 199)"));
    }

    #[test]
    fn text_outside_latin_1_becomes_a_question_mark() {
        assert_eq!(win_ansi("Ñandú €"), b"\xd1and\xfa ?".to_vec());
    }
}
