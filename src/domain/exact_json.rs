//! JSON read and pretty-printed without changing a number (issue 25.7).
//!
//! serde_json (without its `arbitrary_precision` feature, which breaks rmcp's untagged
//! and flattened message types) reads every number that is not an `i64`/`u64` as an
//! `f64`: `123456789012345678901234567890` and `0.1000000000000000055511` come back as
//! other numbers. A vendor's answer is the agent's data, so:
//! - [`pretty`] re-indents the vendor's text as serde_json's pretty printer would, but
//!   copies every number exactly as the vendor wrote it;
//! - [`to_value`] gives a `serde_json::Value` in which each number a double cannot hold
//!   exactly becomes a string of the vendor's digits, so `structuredContent` never
//!   carries a changed number.
//!
//! Both expect text that serde_json has already accepted as JSON (RFC 8259); on anything
//! else they answer `None`.

use serde_json::{Map, Value};

/// A JSON text's tokens, read left to right.
struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn skip_ws(&mut self) {
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() && matches!(bytes[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// A string token (with its quotes and escapes) as a Rust string.
    fn string(&mut self) -> Option<String> {
        self.skip_ws();
        let bytes = self.text.as_bytes();
        if bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at;
        let mut i = start + 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => break,
                _ => i += 1,
            }
        }
        let token = self.text.get(start..=i)?;
        self.at = i + 1;
        serde_json::from_str(token).ok()
    }

    /// A number token, as written.
    fn number(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut i = start;
        while i < bytes.len() && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
        {
            i += 1;
        }
        (i > start).then(|| {
            self.at = i;
            &self.text[start..i]
        })
    }

    fn literal(&mut self, word: &str) -> bool {
        self.skip_ws();
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            true
        } else {
            false
        }
    }
}

/// A decimal number's value as (negative, significant digits without leading or
/// trailing zeros, decimal exponent of the first digit); zero is `(false, "", 0)`.
fn decimal(lexeme: &str) -> Option<(bool, String, i64)> {
    let (neg, rest) = match lexeme.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, lexeme),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = format!("{int}{frac}");
    if !all.bytes().all(|b| b.is_ascii_digit()) || all.is_empty() {
        return None;
    }
    let lead = all.bytes().take_while(|b| *b == b'0').count();
    if lead == all.len() {
        return Some((false, String::new(), 0));
    }
    let digits = all[lead..].trim_end_matches('0').to_string();
    // the first significant digit sits at 10^(len(int) - 1 - lead)
    let first = int.len() as i64 - 1 - lead as i64 + exp;
    Some((neg, digits, first))
}

/// Whether a double holds exactly the number `lexeme` writes: an integer within
/// `i64`/`u64`, or a decimal whose shortest double spelling (as serde_json writes it)
/// has the same value.
pub fn fits_exactly(lexeme: &str) -> bool {
    if lexeme.parse::<i64>().is_ok() || lexeme.parse::<u64>().is_ok() {
        return true;
    }
    let Ok(f) = lexeme.parse::<f64>() else {
        return false;
    };
    if !f.is_finite() {
        return false;
    }
    let written = serde_json::Number::from_f64(f).map(|n| n.to_string());
    match (decimal(lexeme), written.as_deref().and_then(decimal)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Whether every number of a JSON text fits a double exactly ([`fits_exactly`]): when
/// it does, serde_json's own reading loses nothing.
pub fn all_numbers_fit(text: &str) -> bool {
    let mut r = Reader { text, at: 0 };
    loop {
        match r.peek() {
            None => return true,
            Some(b'"') => {
                if r.string().is_none() {
                    return false;
                }
            }
            Some(b'-' | b'0'..=b'9') => match r.number() {
                Some(n) if fits_exactly(n) => {}
                _ => return false,
            },
            Some(_) => r.at += 1,
        }
    }
}

/// `text` (JSON) indented by two spaces as serde_json's `to_string_pretty` writes it,
/// every string passed through `string` (redaction) and written back escaped, every
/// number copied as written. `None` when `text` is not one JSON value.
pub fn pretty(text: &str, string: &dyn Fn(&str) -> String) -> Option<String> {
    let mut r = Reader { text, at: 0 };
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    write_value(&mut r, &mut out, 0, string)?;
    (r.peek().is_none()).then_some(out)
}

fn indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_value(
    r: &mut Reader,
    out: &mut String,
    depth: usize,
    string: &dyn Fn(&str) -> String,
) -> Option<()> {
    if depth > 512 {
        return None;
    }
    match r.peek()? {
        b'{' => {
            r.at += 1;
            if r.eat(b'}') {
                out.push_str("{}");
                return Some(());
            }
            out.push('{');
            loop {
                indent(out, depth + 1);
                let key = r.string()?;
                out.push_str(&serde_json::to_string(&string(&key)).ok()?);
                if !r.eat(b':') {
                    return None;
                }
                out.push_str(": ");
                write_value(r, out, depth + 1, string)?;
                if r.eat(b',') {
                    out.push(',');
                    continue;
                }
                if !r.eat(b'}') {
                    return None;
                }
                indent(out, depth);
                out.push('}');
                return Some(());
            }
        }
        b'[' => {
            r.at += 1;
            if r.eat(b']') {
                out.push_str("[]");
                return Some(());
            }
            out.push('[');
            loop {
                indent(out, depth + 1);
                write_value(r, out, depth + 1, string)?;
                if r.eat(b',') {
                    out.push(',');
                    continue;
                }
                if !r.eat(b']') {
                    return None;
                }
                indent(out, depth);
                out.push(']');
                return Some(());
            }
        }
        b'"' => {
            let s = r.string()?;
            out.push_str(&serde_json::to_string(&string(&s)).ok()?);
            Some(())
        }
        b'-' | b'0'..=b'9' => {
            out.push_str(r.number()?);
            Some(())
        }
        _ => {
            for word in ["true", "false", "null"] {
                if r.literal(word) {
                    out.push_str(word);
                    return Some(());
                }
            }
            None
        }
    }
}

/// The JSON `text` as a value in which every number a double cannot hold exactly
/// ([`fits_exactly`]) is a string of its digits as written; a repeated object key keeps
/// its last value, as serde_json does. `None` when `text` is not one JSON value.
pub fn to_value(text: &str) -> Option<Value> {
    let mut r = Reader { text, at: 0 };
    let v = read_value(&mut r, 0)?;
    r.peek().is_none().then_some(v)
}

fn read_value(r: &mut Reader, depth: usize) -> Option<Value> {
    if depth > 512 {
        return None;
    }
    match r.peek()? {
        b'{' => {
            r.at += 1;
            let mut m = Map::new();
            if r.eat(b'}') {
                return Some(Value::Object(m));
            }
            loop {
                let k = r.string()?;
                if !r.eat(b':') {
                    return None;
                }
                m.insert(k, read_value(r, depth + 1)?);
                if r.eat(b',') {
                    continue;
                }
                return r.eat(b'}').then_some(Value::Object(m));
            }
        }
        b'[' => {
            r.at += 1;
            let mut items = Vec::new();
            if r.eat(b']') {
                return Some(Value::Array(items));
            }
            loop {
                items.push(read_value(r, depth + 1)?);
                if r.eat(b',') {
                    continue;
                }
                return r.eat(b']').then_some(Value::Array(items));
            }
        }
        b'"' => r.string().map(Value::String),
        b'-' | b'0'..=b'9' => {
            let n = r.number()?;
            if fits_exactly(n) {
                serde_json::from_str(n).ok()
            } else {
                Some(Value::String(n.to_string()))
            }
        }
        _ => {
            if r.literal("true") {
                Some(Value::Bool(true))
            } else if r.literal("false") {
                Some(Value::Bool(false))
            } else if r.literal("null") {
                Some(Value::Null)
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_that_fit_a_double_and_ones_that_do_not() {
        for n in [
            "0",
            "-0",
            "1",
            "1.0",
            "1e3",
            "1E+3",
            "0.1",
            "-2.5e-7",
            "9007199254740993",
            "18446744073709551615",
            "100.50",
        ] {
            assert!(fits_exactly(n), "{n}");
        }
        for n in [
            "123456789012345678901234567890",
            "0.1000000000000000055511151231257827",
            "9007199254740993.0",
            "1e400",
            "3.14159265358979323846264338327950288",
        ] {
            assert!(!fits_exactly(n), "{n}");
        }
    }

    #[test]
    fn pretty_keeps_every_number_and_matches_serde_elsewhere() {
        let text = r#"{"id":123456789012345678901234567890,"amount":0.1000000000000000055511,"n":1E2,"list":[],"o":{},"s":"a\u0041\"b","nested":[{"x":true,"y":null}]}"#;
        let p = pretty(text, &|s| s.to_string()).unwrap();
        assert!(p.contains("123456789012345678901234567890"), "{p}");
        assert!(p.contains("0.1000000000000000055511"), "{p}");
        assert!(p.contains("\"n\": 1E2"), "{p}");
        // without such numbers the text is serde_json's own, key order aside
        let plain = r#"{"b":[1,2,{"c":"d"}],"a":{},"e":[]}"#;
        let mine = pretty(plain, &|s| s.to_string()).unwrap();
        let back: Value = serde_json::from_str(&mine).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(plain).unwrap());
        assert_eq!(
            mine,
            "{\n  \"b\": [\n    1,\n    2,\n    {\n      \"c\": \"d\"\n    }\n  ],\n  \"a\": {},\n  \"e\": []\n}"
        );
        // strings go through the redactor, keys too
        let red = pretty(r#"{"k s3cret":"x s3cret"}"#, &|s| {
            s.replace("s3cret", "<redacted>")
        })
        .unwrap();
        assert!(!red.contains("s3cret"), "{red}");
        assert_eq!(pretty("[1,]", &|s| s.to_string()), None);
    }

    #[test]
    fn values_keep_unfit_numbers_as_their_digits() {
        let v =
            to_value(r#"{"id":123456789012345678901234567890,"small":42,"f":2.5,"dup":1,"dup":2}"#)
                .unwrap();
        assert_eq!(
            v,
            json!({"id": "123456789012345678901234567890", "small": 42, "f": 2.5, "dup": 2})
        );
        assert_eq!(to_value("  7 "), Some(json!(7)));
        assert_eq!(to_value("[1] x"), None);
    }
}
