//! Whether a YAML file reads as the kind of file it was given as, up to a point: the rule
//! that decides whether a problem may quote the file's line (see [`crate::base::diagnostic`]).
//!
//! Only a failed parse asks: the text is parsed again by a visitor that looks at the top
//! level alone (a mapping, each key a field of the kind) and skips every value.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_saphyr::{Options, Spanned};

/// How far the text reads as a file of its kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Shape {
    /// Line and column of the first top-level key that is a field of the kind.
    field: Option<(u64, u64)>,
    /// Line and column of the first top-level key that is not.
    stray_key: Option<(u64, u64)>,
}

thread_local! {
    /// What the top-level visitor found, and the fields it checks keys against.
    static SHAPE: Cell<(Shape, Option<&'static [&'static str]>)> =
        const { Cell::new((Shape { field: None, stray_key: None }, None)) };
}

/// Whether a problem at `line`, `column` of `text`, which failed to parse as `T`, may quote
/// the file's line: the top level is a mapping whose first key, at or before the problem, is
/// a field of `T`, and no top-level key before the problem is anything else. A file that is
/// not YAML, or whose top level is a scalar or a sequence, or whose top-level keys are not
/// `T`'s fields, is not quoted.
pub(super) fn may_quote<T: DeserializeOwned>(
    text: &str,
    options: Options,
    line: u64,
    column: u64,
) -> bool {
    SHAPE.with(|s| s.set((Shape::default(), top_level_fields::<T>())));
    // The outcome is in SHAPE, whether the parse ends in an error or not.
    let _ = serde_saphyr::from_str_with_options::<TopLevel>(text, options);
    let (shape, _) = SHAPE.with(Cell::take);
    let problem = (line, column);
    shape.field.is_some_and(|at| at <= problem) && shape.stray_key.is_none_or(|at| at > problem)
}

/// The fields a derived struct `T` names, found by asking it to deserialize from a
/// deserializer that records them and fails; `None` when `T` is not a plain struct.
fn top_level_fields<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
    let mut probe = FieldProbe(None);
    let _ = T::deserialize(&mut probe);
    probe.0
}

struct FieldProbe(Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for &mut FieldProbe {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0 = Some(fields);
        Err(de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// Most characters a key may have and still read as a name.
const NAME_CHARS: usize = 64;

/// Whether `text` reads as a name a file of stepcost's may hold (a field, a param, a chip
/// id): 1 to 64 ASCII letters, digits, `_`, `-`, `.` and `+`. What is not a name (a line of
/// a password file, a sentence, a token with `$` or `/`) is never echoed by a message about a
/// file that does not read as its kind.
pub(crate) fn is_name(text: &str) -> bool {
    (1..=NAME_CHARS).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'+'))
}

/// `message` with every span in backticks or double quotes that is not a name (see
/// [`is_name`]) cut to `…`: for a problem in a file that does not read as its kind, whose
/// text a parser's message may repeat.
pub(crate) fn redact(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find(['`', '"']) {
        let quote = rest[start..].chars().next().expect("found");
        out.push_str(&rest[..=start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find(quote) else {
            // An unclosed quote: what follows may be the file's text.
            out.push('…');
            return out;
        };
        let span = &after[..end];
        out.push_str(if is_name(span) { span } else { "…" });
        out.push(quote);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The top level of a file as [`may_quote`] reads it; what it finds goes to `SHAPE`.
struct TopLevel;

impl<'de> Deserialize<'de> for TopLevel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(TopLevelVisitor)
    }
}

struct TopLevelVisitor;

impl<'de> Visitor<'de> for TopLevelVisitor {
    type Value = TopLevel;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a mapping")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevel, A::Error> {
        let record = |change: &dyn Fn(&mut Shape)| {
            SHAPE.with(|s| {
                let (mut shape, fields) = s.get();
                change(&mut shape);
                s.set((shape, fields));
            })
        };
        let fields = SHAPE.with(|s| s.get().1);
        while let Some(key) = map.next_key::<Spanned<Key>>()? {
            let known = match (&key.value.0, fields) {
                (Some(name), Some(fields)) => fields.contains(&name.as_str()),
                // A map keyed by names (a price book's chip ids): a key that is no name is
                // not of the kind (the `root:$6$...` line of a password file).
                (Some(name), None) => is_name(name),
                (None, _) => false,
            };
            let at = (key.referenced.line(), key.referenced.column());
            if !known {
                record(&|s| s.stray_key = Some(at));
                return Err(de::Error::custom("a top-level key that is not a field"));
            }
            record(&|s| s.field = s.field.or(Some(at)));
            map.next_value::<IgnoredAny>()?;
        }
        Ok(TopLevel)
    }
}

/// A mapping key: its text, or `None` when it is not a string (a number, a collection).
struct Key(Option<String>);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(Key(Some(v.to_owned())))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Key, E> {
        Ok(Key(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Key, E> {
        Ok(Key(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Key, E> {
        Ok(Key(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Key, E> {
        Ok(Key(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
        Ok(Key(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Key, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Key(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Key, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Key(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Two {
        name: String,
        size: u64,
    }

    fn quotes(text: &str, line: u64, column: u64) -> bool {
        may_quote::<Two>(text, serde_saphyr::Options::default(), line, column)
    }

    #[test]
    fn only_text_that_reads_as_the_kind_up_to_the_problem_is_quoted() {
        assert_eq!(top_level_fields::<Two>(), Some(&["name", "size"][..]));
        // a problem inside a field's value, or a syntax error after the fields begin
        assert!(quotes("name: a\nsize: [1\n", 2, 7));
        assert!(quotes("name: a\nsize: x\n", 2, 7));
        // not a mapping, not YAML, empty; a mapping broken before a field is seen
        assert!(!quotes("SECRET=hunter2\n", 1, 1));
        assert!(!quotes("- a\n- b\n", 1, 1));
        assert!(!quotes("", 1, 1));
        assert!(!quotes("\"a\": [b\n", 2, 1));
        // a key that is not a field, at or before the problem; a key that is not text
        assert!(!quotes("password: hunter2\n", 1, 1));
        assert!(!quotes("name: a\ntoken: x\nsize: 1\n", 3, 7));
        assert!(quotes("name: a\nsize: q\ntoken: x\n", 2, 7));
        assert!(!quotes("[a]: x\n", 1, 1));
    }

    #[test]
    fn a_map_keyed_by_names_quotes_only_names() {
        let quotes = |text: &str, line, column| {
            may_quote::<indexmap::IndexMap<String, u64>>(
                text,
                serde_saphyr::Options::default(),
                line,
                column,
            )
        };
        assert!(quotes("h200: x\n", 1, 7));
        assert!(quotes("h200: 1\nb200: x\n", 2, 7));
        // a password file's line reads as a key, with a null value
        assert!(!quotes("root:$6$salt$hash:19000:0:99999:7:::\n", 1, 37));
        assert!(!quotes("h200: 1\nthe secret: x\n", 2, 13));
    }

    #[test]
    fn names_and_redaction() {
        assert!(is_name("h200") && is_name("nvidia-h100_sxm.v2+"));
        assert!(!is_name("") && !is_name("a b") && !is_name("root:$6$x") && !is_name("a/b"));
        assert!(!is_name(&"a".repeat(65)));
        assert_eq!(
            redact("unknown field `root:$6$x`, expected one of `name`"),
            "unknown field `…`, expected one of `name`"
        );
        assert_eq!(
            redact("invalid type: string \"hunter 2\""),
            "invalid type: string \"…\""
        );
        assert_eq!(redact("bad `tail of the file"), "bad `…");
    }
}
