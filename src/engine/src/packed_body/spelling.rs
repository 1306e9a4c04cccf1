//! Bytes spelled out as text in a body, put back as bytes before it is compressed: runs of
//! lowercase hex (a preview's subaccounts and memo) and principals' text (an input's and a
//! preview's `to`, the canister). A transfer's body spells each of those bytes once more
//! beside the argument that holds them; as bytes, the compressor finds them in the argument
//! and keeps a reference instead of 64 or 63 characters that it could not shorten much.
//!
//! The form is a token stream: every byte stands for itself except [`MARK`], which starts a
//! token: `MARK 0x00` is the byte `MARK` itself, `MARK n` (n in 1..=127) the next n bytes
//! spelled as 2n lowercase hex digits, `MARK 0x80|n` (n ≤ 29) the next n bytes as a principal's
//! text. A token is written only where its spelling is exactly the text it replaces (a
//! principal's text is written back by `Principal::to_text`), so [`respell`] of [`unspell`] is
//! always the input; where a token starts is only a matter of how much it saves: at the start
//! of a word (after a byte that is not a letter, a digit or `-`), a principal's whole text, or
//! the even part of a run of 16 or more hex digits.

use candid::Principal;

/// The byte that starts a token (rare in postcard's bodies and in text).
const MARK: u8 = 0xfe;
/// `MARK LITERAL`: the byte `MARK`.
const LITERAL: u8 = 0x00;
/// `MARK (PRINCIPAL | n)`: n bytes spelled as a principal's text.
const PRINCIPAL: u8 = 0x80;
/// A principal is at most 29 bytes (the IC interface specification).
const PRINCIPAL_MAX: usize = 29;
/// A hex token holds 1..=127 bytes; a run is written as tokens only from 8 bytes (16 digits).
const HEX_MAX: usize = 127;
const HEX_MIN: usize = 8;
/// The shortest principal text (`aaaaa-aa`, no bytes) and the longest: 29 bytes and a 4-byte
/// checksum in base32, dashes every 5.
const PRINCIPAL_TEXT_MIN: usize = 8;
const PRINCIPAL_TEXT_MAX: usize = 63;
/// How many principals each side remembers: a body names a few (owner, recipient, canister),
/// and a bound keeps a body of thousands (a hostile input, a broken record) linear.
const REMEMBERED: usize = 8;

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_digit() || (b'a'..=b'f').contains(&c)
}

fn is_principal_char(c: u8) -> bool {
    c.is_ascii_lowercase() || (b'2'..=b'7').contains(&c) || c == b'-'
}

/// The principal whose text is exactly `text` (lowercase, as `is_principal_char` takes it), if
/// there is one: `Principal::from_text` takes only a text that its own `to_text` writes but for
/// case (tested below), so nothing is written back but what was read.
fn principal_spelled(text: &[u8]) -> Option<Principal> {
    if text.len() < PRINCIPAL_TEXT_MIN || text.len() > PRINCIPAL_TEXT_MAX || !text.contains(&b'-') {
        return None;
    }
    Principal::from_text(std::str::from_utf8(text).ok()?).ok()
}

/// `plain` with hex runs and principals' text as tokens (see the module's note).
pub fn unspell(plain: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(plain.len());
    // A body spells its principals more than once (an input's, a preview's, a summary's):
    // each text is read once.
    let mut seen: Vec<(&[u8], Principal)> = Vec::new();
    // Bytes standing for themselves are copied a run at a time, from `from` to `i`.
    let mut from = 0;
    let mut i = 0;
    // Whether the byte before `i` is part of a word: a token starts only where one does.
    let mut in_word = false;
    while i < plain.len() {
        let c = plain[i];
        if c == MARK {
            out.extend_from_slice(&plain[from..i]);
            out.extend_from_slice(&[MARK, LITERAL]);
            i += 1;
            from = i;
            in_word = false;
            continue;
        }
        if !in_word && (c.is_ascii_lowercase() || c.is_ascii_digit()) {
            let rest = &plain[i..];
            let text = &rest[..rest.iter().take_while(|&&c| is_principal_char(c)).count()];
            let principal = if let Some(&(_, p)) = seen.iter().find(|(t, _)| *t == text) {
                Some(p)
            } else {
                let p = principal_spelled(text);
                if let Some(p) = p.filter(|_| seen.len() < REMEMBERED) {
                    seen.push((text, p));
                }
                p
            };
            if let Some(p) = principal {
                out.extend_from_slice(&plain[from..i]);
                let bytes = p.as_slice();
                out.extend_from_slice(&[MARK, PRINCIPAL | bytes.len() as u8]);
                out.extend_from_slice(bytes);
                i += text.len();
                from = i;
                in_word = true;
                continue;
            }
            let digits = rest.iter().take_while(|&&c| is_hex(c)).count();
            if digits >= 2 * HEX_MIN {
                out.extend_from_slice(&plain[from..i]);
                for run in rest[..digits - digits % 2].chunks(2 * HEX_MAX) {
                    out.extend_from_slice(&[MARK, (run.len() / 2) as u8]);
                    out.extend(run.chunks(2).map(|d| (nibble(d[0]) << 4) | nibble(d[1])));
                }
                i += digits - digits % 2;
                from = i;
                in_word = true;
                continue;
            }
        }
        in_word = is_word(c);
        i += 1;
    }
    out.extend_from_slice(&plain[from..]);
    out
}

fn nibble(d: u8) -> u8 {
    match d {
        b'0'..=b'9' => d - b'0',
        _ => d - b'a' + 10,
    }
}

/// What `unspell` was given, from its tokens; refused past `limit` bytes or when a token is
/// cut short or unknown.
pub fn respell(tokens: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(limit.min(tokens.len() * 2));
    // Each principal's text is written once and copied where it is spelled again.
    let mut seen: Vec<(&[u8], (usize, usize))> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let c = tokens[i];
        i += 1;
        if c == MARK {
            let tag = *tokens.get(i).ok_or("a packed body ends inside a token")?;
            i += 1;
            let n = match tag {
                LITERAL => 0,
                1..=0x7f => tag as usize,
                _ if tag & PRINCIPAL != 0 && (tag & !PRINCIPAL) as usize <= PRINCIPAL_MAX => {
                    (tag & !PRINCIPAL) as usize
                }
                _ => return Err(format!("a packed body has an unknown token {tag:#04x}")),
            };
            let bytes = tokens
                .get(i..i + n)
                .ok_or("a packed body ends inside a token")?;
            i += n;
            match tag {
                LITERAL => out.push(MARK),
                1..=0x7f => {
                    for b in bytes {
                        out.extend_from_slice(&[HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
                    }
                }
                _ => match seen.iter().find(|(b, _)| *b == bytes) {
                    Some(&(_, (from, to))) => out.extend_from_within(from..to),
                    None => {
                        let p = Principal::try_from_slice(bytes)
                            .map_err(|e| format!("a packed body has a bad principal: {e}"))?;
                        let at = out.len();
                        out.extend_from_slice(p.to_text().as_bytes());
                        if seen.len() < REMEMBERED {
                            seen.push((bytes, (at, out.len())));
                        }
                    }
                },
            }
        } else {
            out.push(c);
        }
        if out.len() > limit {
            return Err(format!(
                "a packed body spells out more than the {limit} bytes its length says"
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_unspelled_is_respelled_to_itself() {
        let to = "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae";
        let cases: Vec<Vec<u8>> = vec![
            vec![],
            vec![MARK],
            vec![MARK, MARK, 0, 0x80],
            format!(r#"{{"to":"{to}","memo":"5793384fe0ad58b2730812f762fd0855"}}"#).into(),
            format!("{to}{to} {to}-x {to}0").into(),
            // Odd runs, a run longer than one token, upper case, short runs, a principal's
            // text with its checksum wrong, a principal's text in capitals.
            "0123456789abcdef0 ".repeat(20).into(),
            "ab".repeat(300).into(),
            "0123456789ABCDEF0123456789abcdef".into(),
            "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6af".into(),
            to.to_uppercase().into(),
            "2vxsx-fae aaaaa-aa ryjl3-tyaaa-aaaaa-aaaba-cai".into(),
            (0..=255u8).cycle().take(2_000).collect(),
        ];
        for plain in cases {
            let tokens = unspell(&plain);
            assert_eq!(
                respell(&tokens, plain.len()).unwrap(),
                plain,
                "{}",
                String::from_utf8_lossy(&plain)
            );
        }
    }

    #[test]
    fn hex_and_principals_become_their_bytes() {
        let to = "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae";
        let p = Principal::from_text(to).unwrap();
        let tokens = unspell(format!("\"{to}\"").as_bytes());
        assert_eq!(tokens.len(), 2 + 2 + p.as_slice().len());
        assert_eq!(&tokens[3..3 + p.as_slice().len()], p.as_slice());
        let tokens = unspell(b" d054c34a77cc450f776ff244089b0e80f3558c973343e9db158ea51ea0350c70");
        assert_eq!(tokens.len(), 1 + 2 + 32);
        assert_eq!(&tokens[..3], &[b' ', MARK, 32]);
        // Inside a word, and short runs: left as text.
        for text in ["x0123456789abcdef", "0123456789abcde", "xk2t6j-2nvnp"] {
            assert_eq!(unspell(text.as_bytes()), text.as_bytes(), "{text}");
        }
    }

    /// What `principal_spelled` leans on: a text `from_text` takes is the one `to_text` writes
    /// (but for case, and the text here is lowercase).
    #[test]
    fn only_a_principals_own_text_is_taken_for_it() {
        let to = "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae";
        assert!(principal_spelled(to.as_bytes()).is_some());
        assert!(principal_spelled(b"ryjl3-tyaaa-aaaaa-aaaba-cai").is_some());
        for other in [
            "k2t6j2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae",
            "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq6ae",
            "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae-",
            "k2t6j--2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae",
            "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6af",
            "ryjl3-tyaaa-aaaaa-aaaba-caj",
            "ryjl3-tyaaa-aaaaa-aaaba-cai-",
            "ryjl3-tyaaa-aaaaa-aaaba-ca-i",
            "ryjl3tyaaa-aaaaa-aaaba-cai",
            "-ryjl3-tyaaa-aaaaa-aaaba-cai",
        ] {
            assert_eq!(principal_spelled(other.as_bytes()), None, "{other}");
        }
    }

    #[test]
    fn tokens_that_do_not_respell_are_refused_by_name() {
        let cases: [(&[u8], usize, &str); 6] = [
            (&[MARK], 10, "ends inside a token"),
            (&[MARK, 4, 1, 2], 10, "ends inside a token"),
            (&[MARK, 0xa0], 10, "unknown token"),
            (&[MARK, 0xff], 10, "unknown token"),
            (&[MARK, 2, 1, 2], 3, "more than the 3 bytes"),
            (b"abcd", 3, "more than the 3 bytes"),
        ];
        for (tokens, limit, says) in cases {
            let e = respell(tokens, limit).unwrap_err();
            assert!(e.contains(says), "{tokens:?}: {e}");
        }
    }

    /// Whatever the bytes, hostile ones included (marks, principals' texts and hex runs cut,
    /// joined and mixed with binary), respelling the tokens gives them back, and the tokens
    /// are never more than twice as long.
    mod any_bytes {
        use super::*;
        use proptest::prelude::*;

        fn piece() -> impl Strategy<Value = Vec<u8>> {
            let to = "k2t6j-2nvnp-4zjm3-25dtz-6xhaa-c7boj-5gayf-oj3xs-i43lp-teztq-6ae";
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..40),
                Just(vec![MARK]),
                Just(to.as_bytes().to_vec()),
                (0..to.len()).prop_map(move |n| to.as_bytes()[..n].to_vec()),
                proptest::collection::vec(any::<u8>(), 0..=PRINCIPAL_MAX)
                    .prop_map(|b| Principal::from_slice(&b).to_text().into_bytes()),
                proptest::collection::vec(any::<u8>(), 0..200)
                    .prop_map(|b| hex::encode(b).into_bytes()),
                "[0-9a-f -]{0,80}".prop_map(String::into_bytes),
                "[a-z2-7-]{0,70}".prop_map(String::into_bytes),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2_000))]
            #[test]
            fn respell_of_unspell_is_the_input(
                pieces in proptest::collection::vec(piece(), 0..12)
            ) {
                let plain = pieces.concat();
                let tokens = unspell(&plain);
                prop_assert!(tokens.len() <= 2 * plain.len());
                prop_assert_eq!(respell(&tokens, plain.len()).unwrap(), plain);
            }
        }
    }
}
