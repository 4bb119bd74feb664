//! Reading the SAT's published 69-B list (`Listado_Completo_69-B.csv`, FACTS.md §5 and
//! the fixtures' README): a single-byte Windows code page (or UTF-8, in case the SAT
//! changes), a preamble (a legend with the cut-off date, a title), a 20-column header,
//! then one row per taxpayer. Any line that breaks the format refuses the whole file,
//! naming the line: a partial list would clear taxpayers that are on it. Lines are
//! physical lines, as an editor numbers them, whatever the line ends (the SAT writes
//! CRLF) and however many lines a quoted field spans. The file is read as it goes, a
//! row at a time, so a list of any length takes the same memory.

use std::collections::VecDeque;
use std::io::Read;

use chrono::NaiveDate;

use crate::domain::list_69b::{Entry, Published, Situation};

/// The columns, by position (1-based in the SAT's header).
const COLUMNS: usize = 20;
const RFC: usize = 1;
const NAME: usize = 2;
const SITUATION: usize = 3;
/// The publication dates (page of the SAT, then DOF) of each stage.
const PRESUMED: (usize, usize) = (5, 7);
const DISPROVED: (usize, usize) = (9, 11);
const DEFINITIVE: (usize, usize) = (13, 15);
const FAVORABLE: (usize, usize) = (17, 19);

/// Why a file was refused, and on which line (1-based).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    pub line: u64,
    pub message: String,
}

fn error(line: u64, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        message: message.into(),
    }
}

/// The file's text as UTF-8, decoded as it is read: as it is when the whole file is
/// UTF-8 (`Spooled::utf8`; a leading BOM dropped), otherwise as Windows-1252, which keeps
/// `Ñ` (satcfdi's windows-1250 would turn it into `Ń`).
pub struct Decoded<R> {
    inner: R,
    utf8: bool,
    started: bool,
    raw: Vec<u8>,
    /// Text decoded and not yet read, from `at`.
    text: Vec<u8>,
    at: usize,
}

impl<R: Read> Decoded<R> {
    pub fn new(inner: R, utf8: bool) -> Decoded<R> {
        Decoded {
            inner,
            utf8,
            started: false,
            raw: vec![0; 32 * 1024],
            text: Vec::new(),
            at: 0,
        }
    }

    /// Decodes the next piece of the file into `text`; false at its end.
    fn more(&mut self) -> std::io::Result<bool> {
        let n = loop {
            match self.inner.read(&mut self.raw) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                read => break read?,
            }
        };
        let raw = &self.raw[..n];
        if self.utf8 {
            self.text.extend_from_slice(raw);
        } else {
            let mut c = [0; 4];
            for b in raw {
                self.text
                    .extend_from_slice(windows_1252(*b).encode_utf8(&mut c).as_bytes());
            }
        }
        Ok(n > 0)
    }
}

impl<R: Read> Read for Decoded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.text.len() {
            self.text.clear();
            self.at = 0;
            let more = if self.started {
                self.more()?
            } else {
                self.started = true;
                // A BOM is three bytes: have them before looking (a read may bring fewer).
                let mut more = true;
                while more && self.text.len() < 3 {
                    more = self.more()?;
                }
                const BOM: &[u8] = "\u{FEFF}".as_bytes();
                if self.utf8 && self.text.starts_with(BOM) {
                    self.at = BOM.len();
                }
                more
            };
            if !more && self.at == self.text.len() {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.text.len() - self.at);
        buf[..n].copy_from_slice(&self.text[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn windows_1252(b: u8) -> char {
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8D}', 'Ž',
        '\u{8F}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9D}',
        'ž', 'Ÿ',
    ];
    match b {
        0x80..=0x9F => HIGH[usize::from(b - 0x80)],
        b => char::from(b),
    }
}

/// Lower case without accents, `U+FFFD` or blanks at the ends: header cells and
/// situations compare so, whatever became of their accents.
fn fold(text: &str) -> String {
    text.trim()
        .chars()
        .filter(|c| *c != '\u{FFFD}')
        .map(|c| match c {
            'á' | 'Á' => 'a',
            'é' | 'É' => 'e',
            'í' | 'Í' => 'i',
            'ó' | 'Ó' => 'o',
            'ú' | 'Ú' => 'u',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The text as the CSV reader reads it, remembering where its line breaks are: the csv
/// crate's own line count is one short after each CRLF (it counts the `\n` of a
/// record's end when it reads the next record).
struct Lines<R> {
    inner: R,
    /// Bytes read so far.
    read: u64,
    /// Offsets of the line breaks read but not yet passed (at most a buffer's worth).
    ahead: VecDeque<u64>,
    passed: u64,
}

impl<R: Read> Read for Lines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let start = self.read;
        self.ahead.extend(
            buf[..n]
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| start + i as u64),
        );
        self.read += n as u64;
        Ok(n)
    }
}

impl<R> Lines<R> {
    fn new(inner: R) -> Lines<R> {
        Lines {
            inner,
            read: 0,
            ahead: VecDeque::new(),
            passed: 0,
        }
    }

    /// How many line breaks come before `offset` (asked in increasing order).
    fn breaks_before(&mut self, offset: u64) -> u64 {
        while self.ahead.front().is_some_and(|b| *b < offset) {
            self.ahead.pop_front();
            self.passed += 1;
        }
        self.passed
    }
}

/// The physical line `record`, just read, starts on: the reader stands past the first
/// byte of the record's end (or at the end of the text), so the line breaks before that
/// byte, less those inside the record's quoted fields, are the lines before it.
fn first_line<R: Read>(reader: &mut ::csv::Reader<Lines<R>>, record: &::csv::StringRecord) -> u64 {
    let end = reader.position().byte().saturating_sub(1);
    let inside: u64 = record
        .iter()
        .map(|field| field.bytes().filter(|b| *b == b'\n').count() as u64)
        .sum();
    1 + reader.get_mut().breaks_before(end).saturating_sub(inside)
}

/// Reads a list's text (`Decoded`), handing each taxpayer's row to `each` in file order
/// (a repeated RFC comes again: the last one counts); returns the list's cut-off date.
/// A broken line fails it with a `ParseError`, and so does a failure of `each`.
pub fn read(
    text: impl Read,
    mut each: impl FnMut(Entry) -> anyhow::Result<()>,
) -> anyhow::Result<Option<NaiveDate>> {
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(Lines::new(text));
    let mut updated_to = None;
    let mut header_seen = false;
    let mut rows = 0u64;
    let mut record = ::csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let at = reader.position().byte();
                let line = 1 + reader.get_mut().breaks_before(at);
                return Err(error(line, format!("not CSV: {e}")).into());
            }
        }
        let line = first_line(&mut reader, &record);
        if !header_seen {
            let first = record.get(0).unwrap_or("");
            if updated_to.is_none() {
                updated_to = cut_off(first);
            }
            if fold(first) == "no" && record.get(RFC).map(fold).as_deref() == Some("rfc") {
                if record.len() != COLUMNS {
                    return Err(error(
                        line,
                        format!("the header has {} columns, not {COLUMNS}", record.len()),
                    )
                    .into());
                }
                header_seen = true;
            } else if line > 10 {
                return Err(error(
                    line,
                    "no header (No, RFC, ...) in the first lines: not the 69-B list",
                )
                .into());
            }
            continue;
        }
        if record.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        each(row(&record, line)?)?;
        rows += 1;
    }
    if !header_seen {
        return Err(error(1, "no header (No, RFC, ...): not the 69-B list").into());
    }
    if rows == 0 {
        return Err(error(1, "the list has no taxpayers").into());
    }
    Ok(updated_to)
}

/// A whole list in memory, as the tests read one.
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct Parsed {
    pub updated_to: Option<NaiveDate>,
    /// By RFC, each with its last row.
    pub entries: Vec<Entry>,
}

#[cfg(test)]
pub(crate) fn parse(bytes: &[u8]) -> Result<Parsed, ParseError> {
    let mut by_rfc = std::collections::BTreeMap::new();
    let text = Decoded::new(bytes, std::str::from_utf8(bytes).is_ok());
    let updated_to = read(text, |e| {
        by_rfc.insert(e.rfc.clone(), e);
        Ok(())
    })
    .map_err(|e| e.downcast::<ParseError>().expect("only the file can fail"))?;
    Ok(Parsed {
        updated_to,
        entries: by_rfc.into_values().collect(),
    })
}

fn row(record: &::csv::StringRecord, line: u64) -> Result<Entry, ParseError> {
    if record.len() != COLUMNS {
        return Err(error(
            line,
            format!("{} columns, not {COLUMNS}", record.len()),
        ));
    }
    let cell = |i: usize| record.get(i).unwrap_or("").trim();
    let rfc = cell(RFC).to_uppercase();
    let valid_rfc = (12..=13).contains(&rfc.chars().count())
        && rfc
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '&' || c == 'Ñ');
    if !valid_rfc {
        return Err(error(line, format!("RFC {:?} is not an RFC", cell(RFC))));
    }
    let situation = Situation::from_list(&fold(cell(SITUATION)))
        .ok_or_else(|| error(line, format!("unknown situation {:?}", cell(SITUATION))))?;
    let date = |i: usize| -> Result<Option<NaiveDate>, ParseError> {
        let text = cell(i);
        if text.is_empty() {
            return Ok(None);
        }
        NaiveDate::parse_from_str(text, "%d/%m/%Y")
            .map(Some)
            .map_err(|_| {
                error(
                    line,
                    format!("column {} is not a date (DD/MM/YYYY): {text:?}", i + 1),
                )
            })
    };
    let published = |(sat, dof): (usize, usize)| -> Result<Published, ParseError> {
        Ok(Published {
            sat: date(sat)?,
            dof: date(dof)?,
        })
    };
    Ok(Entry {
        rfc,
        name: cell(NAME).to_owned(),
        situation,
        presumed: published(PRESUMED)?,
        disproved: published(DISPROVED)?,
        definitive: published(DEFINITIVE)?,
        favorable: published(FAVORABLE)?,
    })
}

/// `... actualizada al 31 de marzo de 2024; ...` -> 2024-03-31.
fn cut_off(legend: &str) -> Option<NaiveDate> {
    const MONTHS: [&str; 12] = [
        "enero",
        "febrero",
        "marzo",
        "abril",
        "mayo",
        "junio",
        "julio",
        "agosto",
        "septiembre",
        "octubre",
        "noviembre",
        "diciembre",
    ];
    let folded = fold(legend);
    let rest = &folded[folded.find("actualizada al ")? + "actualizada al ".len()..];
    let mut words = rest.split_whitespace();
    let day: u32 = words.next()?.parse().ok()?;
    (words.next()? == "de").then_some(())?;
    let month_name = words.next()?;
    let month = MONTHS.iter().position(|m| *m == month_name)? as u32 + 1;
    (words.next()? == "de").then_some(())?;
    let year: i32 = words
        .next()?
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()?;
    NaiveDate::from_ymd_opt(year, month, day)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/sat-status-fixtures/69b-listado-completo-sample.satcfdi.csv",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn day(s: &str) -> Option<NaiveDate> {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
    }

    /// The text as the SAT publishes it: Windows-1252, accents restored.
    fn windows_1252_text(text: &str) -> Vec<u8> {
        text.chars()
            .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
            .collect()
    }

    #[test]
    fn the_published_sample_is_read() {
        let list = parse(&sample()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(list.updated_to, day("2024-03-31"));
        assert_eq!(list.entries.len(), 3);
        let first = &list.entries[0];
        assert_eq!(first.rfc, "AAA090909HHH");
        assert_eq!(first.name, "AAA Y ACTIVOS, S.A. DE C.V.");
        assert_eq!(first.situation, Situation::FavorableRuling);
        assert_eq!(first.presumed.sat, day("2018-06-01"));
        assert_eq!(first.presumed.dof, day("2018-06-25"));
        assert_eq!(first.definitive.dof, day("2018-10-23"));
        assert_eq!(first.favorable.sat, day("2019-03-05"));
        assert_eq!(first.disproved, Published::default());
        assert_eq!(list.entries[1].situation, Situation::Disproved);
        assert_eq!(list.entries[1].disproved.dof, day("2017-11-02"));
    }

    #[test]
    fn a_windows_1252_file_keeps_its_accents_and_enie() {
        let text = String::from_utf8_lossy(&sample())
            .replace("Informaci\u{FFFD}n", "Información")
            .replace("Situaci\u{FFFD}n", "Situación")
            .replace("ABC SANTOS", "PEÑA Y ACCIÓN")
            .replace("AAA292929HHH", "PEÑ292929HHH")
            .replace(
                "Desvirtuado,500-05-2017-38736",
                "Definitivo,500-05-2017-38736",
            );
        let list = parse(&windows_1252_text(&text)).unwrap_or_else(|e| panic!("{e}"));
        let pena = list
            .entries
            .iter()
            .find(|e| e.rfc == "PEÑ292929HHH")
            .expect("the RFC with Ñ");
        assert_eq!(pena.name, "PEÑA Y ACCIÓN, S.A. DE C.V.");
        assert_eq!(pena.situation, Situation::Definitive);
        assert_eq!(list.updated_to, day("2024-03-31"));
    }

    #[test]
    fn a_broken_line_refuses_the_file_naming_it() {
        let text = String::from_utf8_lossy(&sample()).into_owned();
        let short = text.replace(",02/11/2017,,,,,,,,", ",02/11/2017");
        assert_eq!(parse(short.as_bytes()).map(|_| ()).unwrap_err().line, 5);
        let date = text.replace("25/06/2018", "2018-06-25");
        let err = parse(date.as_bytes()).map(|_| ()).unwrap_err();
        assert_eq!(err.line, 4);
        assert!(err.message.contains("2018-06-25"), "{err}");
        let situation = text.replace("Sentencia Favorable", "Perdonado");
        assert!(parse(situation.as_bytes())
            .unwrap_err()
            .message
            .contains("Perdonado"));
        let rfc = text.replace("AAA191919HHH", "NOT AN RFC");
        assert_eq!(parse(rfc.as_bytes()).map(|_| ()).unwrap_err().line, 5);
        assert!(parse(b"RFC,Nombre\nAAA010101AAA,X\n").is_err(), "no header");
        assert!(parse(b"").is_err());
    }

    #[test]
    fn a_broken_line_is_named_by_its_physical_line_whatever_the_line_ends() {
        let lf = String::from_utf8_lossy(&sample()).into_owned();
        let line_of = |text: &str| parse(text.as_bytes()).map(|_| ()).unwrap_err().line;
        for ends in ["\n", "\r\n"] {
            let text = lf.replace('\n', ends);
            // Row 1 is line 4, row 2 line 5.
            assert_eq!(
                line_of(&text.replace("25/06/2018", "2018-06-25")),
                4,
                "{ends:?}"
            );
            assert_eq!(
                line_of(&text.replace("AAA191919HHH", "NOT AN RFC")),
                5,
                "{ends:?}"
            );
            // A blank line before row 2 moves it to line 6.
            let blank = text.replace(&format!("{ends}2,AAA"), &format!("{ends}{ends}2,AAA"));
            assert_eq!(
                line_of(&blank.replace("AAA191919HHH", "NOT AN RFC")),
                6,
                "{ends:?}"
            );
            // Row 1's name spans lines 4 and 5 (a quoted line break): row 2 is line 6,
            // and a broken row 1 is named by the line it starts on.
            let spanning =
                text.replace("AAA Y ACTIVOS, S.A.", &format!("AAA Y ACTIVOS,{ends}S.A."));
            let list = parse(spanning.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                list.entries[0].name,
                format!("AAA Y ACTIVOS,{ends}S.A. DE C.V.")
            );
            assert_eq!(
                line_of(&spanning.replace("AAA191919HHH", "NOT AN RFC")),
                6,
                "{ends:?}"
            );
            assert_eq!(
                line_of(&spanning.replace("25/06/2018", "2018-06-25")),
                4,
                "{ends:?}"
            );
            // The last row, without a line end after it.
            let last = text.trim_end().replace("AAA292929HHH", "NOT AN RFC");
            assert_eq!(line_of(&last), 6, "{ends:?}");
        }
    }

    fn decode(bytes: &[u8], utf8: bool) -> String {
        let mut text = String::new();
        Decoded::new(bytes, utf8)
            .read_to_string(&mut text)
            .expect("decodes");
        text
    }

    #[test]
    fn windows_1252_maps_its_high_range() {
        assert_eq!(decode(&[0x80, b' ', 0xD1, 0xF3], false), "€ Ñó");
        assert_eq!(decode("ya UTF-8 Ñ".as_bytes(), true), "ya UTF-8 Ñ");
        assert_eq!(decode("\u{FEFF}No,RFC".as_bytes(), true), "No,RFC", "BOM");
        assert_eq!(decode("\u{FEFF}".as_bytes(), true), "");
        assert_eq!(decode(b"", true), "");
    }

    /// A reader handing out one byte at a time.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(1);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_list_read_a_byte_at_a_time_reads_the_same() {
        let whole = parse(&sample()).unwrap_or_else(|e| panic!("{e}"));
        let mut rows = vec![];
        let bom = [b"\xEF\xBB\xBF".as_slice(), &sample()].concat();
        let updated_to = read(Decoded::new(Trickle(&bom), true), |e| {
            rows.push(e);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((updated_to, rows), (whole.updated_to, whole.entries));
    }
}
