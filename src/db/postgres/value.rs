//! Values between the seam and PostgreSQL. The seam speaks SQLite's kinds of value
//! (integer, real, text, blob, null: `rusqlite::types::ValueRef`); PostgreSQL types
//! each parameter from the statement, so a value is encoded as the type the server
//! asks for (an integer where it infers `boolean` is true or false, where it infers
//! `text` its decimal digits), and a column is read back as the kind SQLite would have
//! given (`bigint` and `boolean` as integers, `numeric` sums as integers).

use crate::db::sql::{Param, Values};
use bytes::BytesMut;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use rusqlite::types::{ToSqlOutput, ValueRef};
use std::error::Error;

type BoxError = Box<dyn Error + Sync + Send>;

/// A column as the seam reads it.
pub struct Value<'a>(pub ValueRef<'a>);

/// A row as the seam reads it. A `json` column (what `json_build_object` and
/// `json_agg` make) is read compact, as SQLite writes JSON: PostgreSQL's own text puts
/// a space around each `:` and after each `,`, and keeps a `json(text)` cast's text as
/// given, so the same object would read differently on the two engines.
pub struct Row {
    row: postgres::Row,
    /// The compact text of each `json` column, by index (empty when there is none).
    json: Vec<Option<String>>,
}

impl From<postgres::Row> for Row {
    fn from(row: postgres::Row) -> Row {
        let columns = row.columns();
        let json = if columns.iter().any(|c| *c.type_() == Type::JSON) {
            (0..columns.len())
                .map(|i| match row.try_get::<_, Value>(i) {
                    Ok(Value(ValueRef::Text(text))) if *columns[i].type_() == Type::JSON => {
                        std::str::from_utf8(text).ok().map(compact)
                    }
                    _ => None,
                })
                .collect()
        } else {
            Vec::new()
        };
        Row { row, json }
    }
}

impl Values for Row {
    fn value(&self, i: usize) -> anyhow::Result<ValueRef<'_>> {
        if let Some(Some(text)) = self.json.get(i) {
            return Ok(ValueRef::Text(text.as_bytes()));
        }
        Ok(self.row.try_get::<_, Value>(i)?.0)
    }
}

/// JSON text without the white space between its tokens (strings kept as they are).
pub fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_ascii_whitespace() {
            out.push(c);
        }
    }
    out
}

fn is_text(ty: &Type) -> bool {
    matches!(
        *ty,
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::JSON | Type::UNKNOWN
    )
}

impl<'a> FromSql<'a> for Value<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Value<'a>, BoxError> {
        let value = match *ty {
            Type::BOOL => ValueRef::Integer(i64::from(bool::from_sql(ty, raw)?)),
            Type::INT2 => ValueRef::Integer(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => ValueRef::Integer(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => ValueRef::Integer(i64::from_sql(ty, raw)?),
            Type::FLOAT4 => ValueRef::Real(f32::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => ValueRef::Real(f64::from_sql(ty, raw)?),
            // What SUM over a bigint gives: whole, or it is not ours to read.
            Type::NUMERIC => {
                let sum = rust_decimal::Decimal::from_sql(ty, raw)?;
                if !sum.fract().is_zero() {
                    return Err(format!("a numeric column with a fraction ({sum})").into());
                }
                ValueRef::Integer(i64::try_from(sum)?)
            }
            Type::BYTEA => ValueRef::Blob(raw),
            // jsonb's binary form is a version byte (1) and the text.
            Type::JSONB => ValueRef::Text(raw.get(1..).unwrap_or_default()),
            _ if is_text(ty) => ValueRef::Text(raw),
            _ => return Err(format!("a column of type {ty} is not read here").into()),
        };
        Ok(Value(value))
    }

    fn from_sql_null(_: &Type) -> Result<Value<'a>, BoxError> {
        Ok(Value(ValueRef::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A parameter as PostgreSQL receives it.
pub struct Arg<'a>(pub &'a dyn Param);

/// A parameter kept after its statement was called (a deferred write's).
#[derive(Debug)]
pub struct Owned(pub rusqlite::types::Value);

impl Owned {
    pub fn of(param: &dyn Param) -> anyhow::Result<Owned> {
        Ok(Owned(match rusqlite::ToSql::to_sql(param)? {
            ToSqlOutput::Borrowed(v) => match v {
                ValueRef::Null => rusqlite::types::Value::Null,
                ValueRef::Integer(i) => rusqlite::types::Value::Integer(i),
                ValueRef::Real(r) => rusqlite::types::Value::Real(r),
                ValueRef::Text(t) => {
                    rusqlite::types::Value::Text(std::str::from_utf8(t)?.to_string())
                }
                ValueRef::Blob(b) => rusqlite::types::Value::Blob(b.to_vec()),
            },
            ToSqlOutput::Owned(v) => v,
            _ => anyhow::bail!("a parameter of a kind PostgreSQL is not given"),
        }))
    }
}

impl ToSql for Owned {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode((&self.0).into(), ty, out)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl std::fmt::Debug for Arg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Parameters may be secrets (sealed credentials): never shown.
        f.write_str("Arg(..)")
    }
}

impl ToSql for Arg<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        let output = rusqlite::ToSql::to_sql(self.0)?;
        let value = match &output {
            ToSqlOutput::Borrowed(v) => *v,
            ToSqlOutput::Owned(v) => v.into(),
            _ => return Err("a parameter of a kind PostgreSQL is not given".into()),
        };
        encode(value, ty, out)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn encode(value: ValueRef<'_>, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    match value {
        ValueRef::Null => Ok(IsNull::Yes),
        ValueRef::Integer(i) => match *ty {
            Type::BOOL => (i != 0).to_sql(ty, out),
            Type::INT2 => i16::try_from(i)?.to_sql(ty, out),
            Type::INT4 => i32::try_from(i)?.to_sql(ty, out),
            Type::INT8 => i.to_sql(ty, out),
            Type::NUMERIC => rust_decimal::Decimal::from(i).to_sql(ty, out),
            _ if is_text(ty) => text(&i.to_string(), out),
            _ => Err(format!("an integer given where PostgreSQL expects {ty}").into()),
        },
        ValueRef::Real(r) => match *ty {
            Type::FLOAT8 => r.to_sql(ty, out),
            _ if is_text(ty) => text(&r.to_string(), out),
            _ => Err(format!("a real given where PostgreSQL expects {ty}").into()),
        },
        ValueRef::Text(t) => {
            let t = std::str::from_utf8(t)?;
            match *ty {
                Type::BOOL => (t.parse::<i64>()? != 0).to_sql(ty, out),
                Type::INT2 | Type::INT4 | Type::INT8 => {
                    encode(ValueRef::Integer(t.parse()?), ty, out)
                }
                Type::BYTEA => t.as_bytes().to_sql(ty, out),
                Type::JSONB => {
                    out.extend_from_slice(&[1]);
                    text(t, out)
                }
                _ if is_text(ty) => text(t, out),
                _ => Err(format!("text given where PostgreSQL expects {ty}").into()),
            }
        }
        ValueRef::Blob(b) => match *ty {
            Type::BYTEA => b.to_sql(ty, out),
            _ => Err(format!("bytes given where PostgreSQL expects {ty}").into()),
        },
    }
}

fn text(t: &str, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    out.extend_from_slice(t.as_bytes());
    Ok(IsNull::No)
}

/// SQLite's text made PostgreSQL's, outside quoted text and comments: the seam's SQL
/// is written once. Numbered parameters `?1` become `$1`; an `INDEXED BY name` hint
/// (PostgreSQL's planner takes none) is dropped; the JSON builders take PostgreSQL's
/// names (`json(x)` is already a cast there, and `json_each` is read for the `value` of
/// an array of strings).
pub fn translate(sql: &str) -> String {
    const RENAMES: [(&str, &str); 4] = [
        ("indexed by ", ""),
        ("json_object(", "json_build_object("),
        ("json_group_array(", "json_agg("),
        // The seam reads json_each's `value` of an array of strings only.
        ("json_each(", "json_array_elements_text("),
    ];
    let mut out = String::with_capacity(sql.len() + 16);
    let mut rest = sql;
    while let Some(c) = rest.chars().next() {
        let after_word = !out.ends_with(|p: char| p.is_ascii_alphanumeric() || p == '_');
        if let Some((from, to)) = RENAMES.iter().find(|(from, _)| {
            after_word
                && rest
                    .get(..from.len())
                    .is_some_and(|h| h.eq_ignore_ascii_case(from))
        }) {
            rest = &rest[from.len()..];
            out.push_str(to);
            if to.is_empty() {
                // The index's name goes with the hint.
                rest = rest.trim_start_matches(|n: char| n.is_ascii_alphanumeric() || n == '_');
            }
            continue;
        }
        let end = match c {
            '\'' | '"' => rest[1..].find(c).map_or(rest.len(), |i| i + 2),
            '-' if rest.starts_with("--") => rest.find('\n').map_or(rest.len(), |i| i + 1),
            '?' if rest[1..].starts_with(|d: char| d.is_ascii_digit()) => {
                out.push('$');
                rest = &rest[1..];
                continue;
            }
            _ => c.len_utf8(),
        };
        out.push_str(&rest[..end]);
        rest = &rest[end..];
    }
    out
}

/// How many parameters the seam's `sql` names (its highest `?N`, outside quotes).
pub fn parameters(sql: &str) -> usize {
    let text = translate(sql);
    let mut highest = 0;
    let mut rest = text.as_str();
    while let Some(at) = rest.find('$') {
        let after = &rest[at + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        highest = highest.max(after[..digits].parse().unwrap_or(0));
        rest = &after[digits..];
    }
    highest
}

/// `text` with each `$N IS [NOT] NULL` made `NULL IS [NOT] NULL`. PostgreSQL types a
/// parameter where it first meets it, and a null test says nothing: `$2 IS NULL OR id <
/// $2` fails to prepare. Prepared without those tests, the statement tells the types
/// the rest of it gives its parameters.
pub fn without_null_tests(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let tail = after[digits..].trim_start();
        let is_null_test =
            digits > 0 && tail.get(..3).is_some_and(|w| w.eq_ignore_ascii_case("is ")) && {
                let t = tail[3..].trim_start();
                let t = match t.get(..4) {
                    Some(w) if w.eq_ignore_ascii_case("not ") => t[4..].trim_start(),
                    _ => t,
                };
                t.get(..4).is_some_and(|w| w.eq_ignore_ascii_case("null"))
            };
        if is_null_test {
            out.push_str("NULL");
        } else {
            out.push_str(&rest[at..at + 1 + digits]);
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// The type of a parameter PostgreSQL cannot infer, from the value given: text for a
/// NULL, which reads as any type's NULL in a null test.
pub fn type_of(param: &dyn Param) -> Type {
    match rusqlite::ToSql::to_sql(param) {
        Ok(ToSqlOutput::Borrowed(ValueRef::Integer(_)))
        | Ok(ToSqlOutput::Owned(rusqlite::types::Value::Integer(_))) => Type::INT8,
        Ok(ToSqlOutput::Borrowed(ValueRef::Blob(_)))
        | Ok(ToSqlOutput::Owned(rusqlite::types::Value::Blob(_))) => Type::BYTEA,
        _ => Type::TEXT,
    }
}

#[cfg(test)]
mod tests {
    use crate::db::postgres::value::{compact, encode, translate, without_null_tests, Value};
    use bytes::BytesMut;
    use postgres::types::{FromSql, ToSql, Type};
    use rusqlite::types::ValueRef;

    #[test]
    fn sqlite_text_is_translated_outside_quotes_and_comments() {
        assert_eq!(
            translate("SELECT '?1', \"a?2\", x FROM t WHERE a = ?1 AND b = ?12 -- ?3\n AND c = ?3"),
            "SELECT '?1', \"a?2\", x FROM t WHERE a = $1 AND b = $12 -- ?3\n AND c = $3"
        );
        // '' inside a string closes and reopens it: still text.
        assert_eq!(translate("'it''s ?1' || ?2"), "'it''s ?1' || $2");
        assert_eq!(
            translate("SELECT id FROM jobs j INDEXED BY jobs_sat_due\n WHERE x_indexed by_y = 1"),
            "SELECT id FROM jobs j \n WHERE x_indexed by_y = 1"
        );
        assert_eq!(
            translate("SELECT json_group_array(json_object('json_object(', a)), my_json_object(b)"),
            "SELECT json_agg(json_build_object('json_object(', a)), my_json_object(b)"
        );
    }

    #[test]
    fn json_is_read_compact_with_its_strings_untouched() {
        assert_eq!(
            compact(r#"{"a" : 1, "b" : [1, 2], "c" : "x : y, \" z", "d" : {"e" : null}}"#),
            r#"{"a":1,"b":[1,2],"c":"x : y, \" z","d":{"e":null}}"#
        );
        assert_eq!(compact("[ 1.50 ,\n 2 ]"), "[1.50,2]");
        assert_eq!(compact(r#""a \\" "#), r#""a \\""#);
    }

    #[test]
    fn null_tests_of_parameters_are_blanked_for_the_probe() {
        assert_eq!(
            without_null_tests("WHERE ($2 IS NULL OR id < $2) AND ($3 is not  null) AND $4 ISNULL"),
            "WHERE (NULL IS NULL OR id < $2) AND (NULL is not  null) AND $4 ISNULL"
        );
    }

    #[test]
    fn an_integer_is_encoded_as_the_type_the_server_asks_for() {
        let mut out = BytesMut::new();
        encode(ValueRef::Integer(1), &Type::BOOL, &mut out).expect("bool");
        assert_eq!(&out[..], [1]);
        out.clear();
        encode(ValueRef::Integer(42), &Type::TEXT, &mut out).expect("text");
        assert_eq!(&out[..], b"42");
        out.clear();
        encode(ValueRef::Integer(7), &Type::INT4, &mut out).expect("int4");
        assert_eq!(&out[..], [0, 0, 0, 7]);
        assert!(encode(ValueRef::Blob(b"x"), &Type::TEXT, &mut out).is_err());
        assert!(encode(ValueRef::Integer(1 << 40), &Type::INT4, &mut out).is_err());
    }

    #[test]
    fn columns_read_as_the_kind_sqlite_would_give() {
        let v = Value::from_sql(&Type::BOOL, &[1]).expect("bool");
        assert!(matches!(v.0, ValueRef::Integer(1)));
        let v = Value::from_sql(&Type::JSONB, b"\x01{}").expect("jsonb");
        assert!(matches!(v.0, ValueRef::Text(b"{}")));
        let mut raw = BytesMut::new();
        rust_decimal::Decimal::from(12_i64)
            .to_sql(&Type::NUMERIC, &mut raw)
            .expect("encode");
        let v = Value::from_sql(&Type::NUMERIC, &raw).expect("numeric");
        assert!(matches!(v.0, ValueRef::Integer(12)));
    }
}
