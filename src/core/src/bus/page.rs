//! The tool list in pages bounded in bytes, so that a host with many forms and canisters answers
//! within the IC's reply limit and a page costs what its bytes cost (50 instructions each on the
//! IC), not what the whole list does. A page holds whole tools; the cursor names the catalog it
//! was cut from (a fingerprint) and the last tool given, so a list that changed between pages is
//! refused rather than stitched from two catalogs.

use super::decl::ToolDecl;
use super::kept::Text;
use super::markdown;
use super::render::{shape, ToolFormat};
use std::borrow::Cow;

/// A page's text when the caller names no bound: a page of MCP tools then costs about 2 M
/// instructions on the IC (docs/perf.md).
pub const DEFAULT_PAGE_BYTES: usize = 24 * 1024;
/// The bounds a caller may name.
pub const MIN_PAGE_BYTES: usize = 1024;
pub const MAX_PAGE_BYTES: usize = 1024 * 1024;
/// The most room a page's text is given before its tools are put in (a larger page grows as
/// any string does).
const PAGE_ROOM_BYTES: usize = 64 * 1024;
/// A cursor's text at most: the fingerprint, a dot, and a name (128 bytes at most) in hex.
pub const MAX_CURSOR_BYTES: usize = 16 + 1 + 2 * 128;

/// One tool as a page holds it: its shape as compact JSON, or its Markdown section.
pub fn render_one(d: &ToolDecl, format: ToolFormat) -> String {
    if format == ToolFormat::Markdown {
        let mut out = String::new();
        markdown::section(d, &mut out);
        return out;
    }
    // A Value never fails to serialize.
    serde_json::to_string(&shape(d, format)).unwrap_or_default()
}

/// What a page's text is besides its tools: `[`, `]` and the commas of a JSON array, or the
/// Markdown header.
fn frame(format: ToolFormat) -> (String, &'static str, &'static str) {
    match format {
        ToolFormat::Markdown => (markdown::header(), "", ""),
        _ => ("[".to_string(), ",", "]"),
    }
}

/// A page of the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    /// The page's tools in the format: a JSON array, or a Markdown listing.
    pub text: String,
    /// How many tools it holds.
    pub count: usize,
    /// The last tool's name when more follow (the next page starts after it).
    pub next_after: Option<String>,
}

/// The tools of `decls` (sorted by name) after `after`, whole, as many as fit `max_bytes`
/// (at least one: a tool larger than the bound comes alone, never cut). With no tool to give
/// (an empty list) the page is the format's envelope alone (`[]`, the Markdown header), which
/// no bound of [`MIN_PAGE_BYTES`] or more is below. `item` gives a tool's rendering
/// (`render_one`, or one kept from an earlier rendering, parted or whole).
pub fn page<'a, D, F>(
    decls: &'a [D],
    after: Option<&str>,
    format: ToolFormat,
    max_bytes: usize,
    mut item: F,
) -> Page
where
    D: std::borrow::Borrow<ToolDecl>,
    F: FnMut(usize, &'a ToolDecl) -> Cow<'a, Text>,
{
    let start = match after {
        Some(a) => decls.partition_point(|d| d.borrow().name.as_str() <= a),
        None => 0,
    };
    let (mut text, sep, end) = frame(format);
    // Room for the whole page at once (a page is held to `max_bytes`, but for a first tool
    // larger than that), so that it is not copied as it grows: on the IC each byte of a copy
    // counts, and a default page grown from empty copied ~30 K bytes where the heap had no
    // room to grow it in place.
    text.reserve(max_bytes.min(PAGE_ROOM_BYTES).saturating_sub(text.len()));
    let mut count = 0;
    for (i, d) in decls.iter().enumerate().skip(start) {
        let d: &'a ToolDecl = d.borrow();
        let t = item(i, d);
        let grown = text.len() + if count > 0 { sep.len() } else { 0 } + t.len() + end.len();
        if count > 0 && grown > max_bytes {
            break;
        }
        if count > 0 {
            text.push_str(sep);
        }
        t.push_to(&mut text);
        count += 1;
    }
    text.push_str(end);
    let next_after = (count > 0 && start + count < decls.len())
        .then(|| decls[start + count - 1].borrow().name.clone());
    Page {
        text,
        count,
        next_after,
    }
}

/// The version of the rules that render tools in every format. Bump it with any change to
/// what a format shows (the goldens of `tests/bus_golden.rs` change then, and the test
/// `renderings_version_follows_the_goldens` fails until this moves too): cursors of pages cut
/// under other rules then turn stale, so no walk mixes two renderings.
pub const RENDERINGS_VERSION: u64 = 1;

/// A fingerprint of a catalog's tools (their MCP renderings, in order) and of the rendering
/// rules: a cursor carries it so that a page is not joined to one of another list. Not a
/// defence against a chosen collision (whoever could choose one registers forms, and a page
/// cut by name stays whole).
pub fn fingerprint<'a>(items: impl IntoIterator<Item = &'a str>) -> u64 {
    fingerprint_of(items.into_iter().map(item_hash))
}

/// [`fingerprint`] of the tools whose MCP renderings have these [`item_hash`]es: the catalog
/// keeps each tool's hash with its renderings, so that a rebuild does not read every tool's
/// bytes again (at 50 forms on 10 ledgers, 0.29 M of a form's registration).
pub fn fingerprint_of(hashes: impl IntoIterator<Item = u64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    mix(&mut h, RENDERINGS_VERSION);
    for item in hashes {
        mix(&mut h, item);
    }
    h
}

/// The hash of one tool's MCP rendering, as [`fingerprint_of`] reads it.
pub fn item_hash(text: &str) -> u64 {
    item_hash_of(&[text])
}

/// [`item_hash`] of the pieces' text one after another, without putting them together: a
/// spliced tool's MCP text is kept around its form's canister part (`kept::Text`). The text is
/// mixed a word of 8 bytes at a time, the last zero-padded.
pub fn item_hash_of(pieces: &[&str]) -> u64 {
    let mut h: u64 = 0x8422_2325_cbf2_9ce4;
    // Bytes of a word begun in one piece and ended in another.
    let mut word = [0u8; 8];
    let mut filled = 0;
    let mut len = 0;
    for piece in pieces {
        let mut b = piece.as_bytes();
        len += b.len();
        if filled > 0 {
            let take = (8 - filled).min(b.len());
            word[filled..filled + take].copy_from_slice(&b[..take]);
            filled += take;
            b = &b[take..];
            if filled < 8 {
                continue;
            }
            mix(&mut h, u64::from_le_bytes(word));
        }
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            mix(&mut h, u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let rest = chunks.remainder();
        word[..rest.len()].copy_from_slice(rest);
        filled = rest.len();
    }
    let mut last = [0u8; 8];
    last[..filled].copy_from_slice(&word[..filled]);
    mix(&mut h, u64::from_le_bytes(last));
    // The length ends the item, so that moving bytes between items changes the hash.
    mix(&mut h, len as u64);
    h
}

fn mix(h: &mut u64, w: u64) {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    *h = (*h ^ w).wrapping_mul(K).rotate_left(31);
}

/// The cursor of the page after the one that ended with `last`.
pub fn cursor(fingerprint: u64, last: &str) -> String {
    format!("{fingerprint:016x}.{}", hex::encode(last))
}

/// Why a cursor is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CursorError {
    /// Not a cursor this host gave.
    Malformed(String),
    /// Given for another catalog: the list changed since (a form, canister, refs or builtin
    /// setting, or an upgrade that changed a tool or how the fingerprint is made); start again
    /// from the first page.
    Stale,
}

/// The name a cursor says the next page starts after, checked against the catalog's
/// fingerprint.
pub fn read_cursor(cursor: &str, fingerprint: u64) -> Result<String, CursorError> {
    let bad =
        |why: &str| CursorError::Malformed(format!("the cursor is not one this host gave: {why}"));
    if cursor.len() > MAX_CURSOR_BYTES {
        return Err(bad(&format!(
            "{} bytes, over {MAX_CURSOR_BYTES}",
            cursor.len()
        )));
    }
    let (fp, name) = cursor
        .split_once('.')
        .ok_or_else(|| bad("no `.` after the fingerprint"))?;
    if fp.len() != 16 || !fp.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad("the fingerprint is not 16 hex digits"));
    }
    let fp = u64::from_str_radix(fp, 16).map_err(|_| bad("the fingerprint is not hex"))?;
    let name = hex::decode(name).map_err(|_| bad("the name is not hex"))?;
    let name = String::from_utf8(name).map_err(|_| bad("the name is not UTF-8"))?;
    if name.is_empty() {
        return Err(bad("the name is empty"));
    }
    if fp != fingerprint {
        return Err(CursorError::Stale);
    }
    Ok(name)
}
