//! Numbers in words, for every layer and the browser alike (no dependencies): token
//! counts and other large figures grouped by thousands.

/// `n` with its thousands grouped by commas ("3,210", "-1,000").
pub fn grouped(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A token count in words (issue 29): "1 token", "3,210 tokens".
pub fn tokens(n: i64) -> String {
    if n == 1 {
        "1 token".into()
    } else {
        format!("{} tokens", grouped(n))
    }
}

/// `n` and a noun, plural unless `n` is 1 ("1 tool", "3 tools", "2 entries").
pub fn count(n: i64, noun: &str) -> String {
    let n_words = grouped(n);
    if n == 1 {
        format!("1 {noun}")
    } else if let Some(stem) = noun
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u']))
    {
        format!("{n_words} {stem}ies")
    } else {
        format!("{n_words} {noun}s")
    }
}
