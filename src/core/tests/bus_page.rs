//! The tool list in pages (`bus::page`): every tool once, in order, whole; each page within its
//! bound unless one tool alone is larger; the pages together are the whole list in every
//! format; cursors read back, and refuse what the host did not give or another catalog's.

mod common;
use common::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::borrow::Cow;
use tool_host_core::builtin::Builtin;
use tool_host_core::bus::page::{self, CursorError, Page, MIN_PAGE_BYTES};
use tool_host_core::bus::{host_decls, render, ToolDecl, ToolFormat, ToolSource};
use tool_host_core::packs::pack;
use tool_host_core::plan::build_tool_plans;

/// The packs' tools and the builtins, sorted by name as the bus holds them.
fn decls() -> Vec<ToolDecl> {
    let plans = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    let mut d = host_decls(&plans, &[ledger()]);
    d.extend(Builtin::ALL.map(|b| b.decl("UTC")));
    d.sort_by(|a, b| a.name.cmp(&b.name));
    d
}

fn big(name: &str, chars: usize) -> ToolDecl {
    ToolDecl {
        name: name.into(),
        title: name.into(),
        description: "x".repeat(chars),
        effect: None,
        input_schema: json!({"type": "object", "properties": {}}),
        output_schema: None,
        source: ToolSource::Builtin,
    }
}

fn one_page(decls: &[ToolDecl], after: Option<&str>, f: ToolFormat, max: usize) -> Page {
    page::page(decls, after, f, max, |_, d| {
        Cow::Owned(page::render_one(d, f).into())
    })
}

/// Every page from the first, with the names each held.
fn walk(decls: &[ToolDecl], f: ToolFormat, max: usize) -> Vec<Page> {
    let mut pages = vec![];
    let mut after: Option<String> = None;
    loop {
        let p = one_page(decls, after.as_deref(), f, max);
        let next = p.next_after.clone();
        pages.push(p);
        match next {
            Some(n) => after = Some(n),
            None => return pages,
        }
        assert!(pages.len() <= decls.len(), "pages without end");
    }
}

fn check_walk(decls: &[ToolDecl], f: ToolFormat, max: usize) {
    let pages = walk(decls, f, max);
    for p in &pages {
        assert!(
            p.count >= 1 || decls.is_empty(),
            "an empty page before the end"
        );
        // Over the bound only with one tool (never cut), or as the empty list's envelope (a
        // bound below `MIN_PAGE_BYTES`, which the canister refuses: see the test below).
        assert!(
            p.text.len() <= max || p.count == 1 || (p.count == 0 && max < MIN_PAGE_BYTES),
            "{f:?} page of {} tools is {} bytes, over {max}",
            p.count,
            p.text.len()
        );
    }
    let refs: Vec<&ToolDecl> = decls.iter().collect();
    let whole = render(&refs, f);
    if f == ToolFormat::Markdown {
        // Each page is the header and its sections; the sections together are the whole's.
        let header_len = whole.find("\n## ").unwrap_or(whole.len());
        let header = &whole[..header_len];
        let mut joined = header.to_string();
        for p in &pages {
            assert!(p.text.starts_with(header), "a page without the header");
            joined.push_str(&p.text[header_len..]);
        }
        assert_eq!(joined, whole, "the pages are not the whole listing");
    } else {
        let mut all: Vec<Value> = vec![];
        for p in &pages {
            let v: Value = serde_json::from_str(&p.text).expect("a page is JSON");
            let a = v.as_array().expect("a page is an array");
            assert_eq!(a.len(), p.count);
            all.extend(a.iter().cloned());
        }
        let whole: Value = serde_json::from_str(&whole).unwrap();
        assert_eq!(Value::Array(all), whole, "the pages are not the whole list");
    }
    let counted: usize = pages.iter().map(|p| p.count).sum();
    assert_eq!(counted, decls.len());
}

#[test]
fn pages_in_every_format_are_the_whole_list() {
    let d = decls();
    for f in ToolFormat::ALL {
        for max in [1, 1024, 3000, 24 * 1024, 1 << 20] {
            check_walk(&d, f, max);
        }
    }
}

#[test]
fn a_tool_over_the_bound_comes_alone_and_whole() {
    let d = vec![big("a", 100), big("b", 5000), big("c", 100), big("d", 100)];
    let pages = walk(&d, ToolFormat::Mcp, 1024);
    let counts: Vec<usize> = pages.iter().map(|p| p.count).collect();
    assert_eq!(counts, vec![1, 1, 2]);
    assert!(pages[1].text.len() > 5000);
    assert!(pages[1].text.contains(&"x".repeat(5000)));
    check_walk(&d, ToolFormat::Mcp, 1024);
}

#[test]
fn a_cursor_past_a_removed_tool_goes_on_at_the_next_name() {
    let d = decls();
    let cut = d.len() / 2;
    let mut fewer = d.clone();
    let removed = fewer.remove(cut);
    let p = one_page(&fewer, Some(&removed.name), ToolFormat::JsonSchema, 1 << 20);
    let first: Value = serde_json::from_str(&p.text).unwrap();
    assert_eq!(first[0]["name"], json!(d[cut + 1].name));
    // After the last name: an empty last page.
    let last = one_page(&d, Some(&d[d.len() - 1].name), ToolFormat::Mcp, 1024);
    assert_eq!(
        (last.count, last.text.as_str(), last.next_after),
        (0, "[]", None)
    );
}

#[test]
fn cursors_read_back_and_refuse_others() {
    let fp = 0x0123_4567_89ab_cdef;
    let c = page::cursor(fp, "icrc1_transfer");
    assert_eq!(page::read_cursor(&c, fp), Ok("icrc1_transfer".to_string()));
    assert_eq!(page::read_cursor(&c, fp ^ 1), Err(CursorError::Stale));
    let malformed = [
        String::new(),
        "nodot".into(),
        format!("{fp:015x}.61"),
        format!("+{fp:015x}.61"),
        format!("{fp:016x}."),
        format!("{fp:016x}.6"),
        format!("{fp:016x}.zz"),
        format!("{fp:016x}.ff"),
        format!("{fp:016x}.{}", "61".repeat(200)),
    ];
    for m in malformed {
        assert!(
            matches!(page::read_cursor(&m, fp), Err(CursorError::Malformed(_))),
            "{m:?} was read"
        );
    }
}

#[test]
fn the_fingerprint_changes_with_any_tool() {
    let d = decls();
    let items: Vec<String> = d
        .iter()
        .map(|x| page::render_one(x, ToolFormat::Mcp))
        .collect();
    let fp = |v: &[String]| page::fingerprint(v.iter().map(String::as_str));
    let base = fp(&items);
    assert_eq!(base, fp(&items.clone()), "not deterministic");
    for i in 0..items.len() {
        let mut changed = items.clone();
        changed[i].push(' ');
        assert_ne!(
            fp(&changed),
            base,
            "a change of tool {i} kept the fingerprint"
        );
        let mut fewer = items.clone();
        fewer.remove(i);
        assert_ne!(fp(&fewer), base, "tool {i} removed kept the fingerprint");
        if i + 1 < items.len() {
            let mut swapped = items.clone();
            swapped.swap(i, i + 1);
            assert_ne!(fp(&swapped), base, "tools {i} and {} swapped", i + 1);
        }
    }
    // Bytes moved from one tool to the next; a tool that differs only by trailing NULs (the
    // padding of its last word).
    let moved = vec!["ab".to_string(), "c".to_string()];
    let split = vec!["a".to_string(), "bc".to_string()];
    assert_ne!(fp(&moved), fp(&split));
    assert_ne!(fp(&["a".to_string()]), fp(&["a\0".to_string()]));
}

/// The rendering rules' version moves with the goldens of every format: a change of what a
/// format shows is a new version (and so a stale cursor), not a page in another shape.
#[test]
fn renderings_version_follows_the_goldens() {
    use sha2::{Digest, Sha256};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut h = Sha256::new();
    for name in [
        "bus_icrc_anthropic.json",
        "bus_icrc_jsonschema.json",
        "bus_icrc_markdown.md",
        "bus_icrc_mcp.json",
        "bus_icrc_openai.json",
        "bus_icrc_openai_responses.json",
    ] {
        h.update(std::fs::read(dir.join(name)).unwrap());
    }
    let digest = hex::encode(h.finalize());
    // (version, the goldens' digest under it); a new pair when the goldens change.
    let pinned = (
        1,
        "a9d3b5a822e2728ca3ea2c392c22814fc38d2461a9d546a69a1f8e75137579a4",
    );
    assert_eq!(
        (page::RENDERINGS_VERSION, digest.as_str()),
        pinned,
        "the goldens changed: bump bus::page::RENDERINGS_VERSION and pin the new pair"
    );
}

/// A page exactly at its bound holds the tools; one byte less and the last goes on.
#[test]
fn a_page_at_its_bound_is_whole() {
    let d = vec![big("a", 10), big("b", 10)];
    let both = one_page(&d, None, ToolFormat::Mcp, 1 << 20);
    assert_eq!(both.count, 2);
    let at = one_page(&d, None, ToolFormat::Mcp, both.text.len());
    assert_eq!((at.count, at.text.len()), (2, both.text.len()));
    let under = one_page(&d, None, ToolFormat::Mcp, both.text.len() - 1);
    assert_eq!(under.count, 1);
    assert!(under.text.len() < both.text.len() - 1);
}

/// Found by CI's random case `sizes = [], max = 1`: an empty list's page is its format's
/// envelope, over a bound of a few bytes. No bound the canister takes is below any envelope.
#[test]
fn an_empty_lists_envelope_fits_the_smallest_bound() {
    for f in ToolFormat::ALL {
        let p = one_page(&[], None, f, MIN_PAGE_BYTES);
        assert_eq!((p.count, p.next_after.clone()), (0, None), "{f:?}");
        assert!(p.text.len() <= MIN_PAGE_BYTES, "{f:?}: {}", p.text.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_sizes_and_bounds_walk_whole(
        sizes in proptest::collection::vec(0usize..3000, 0..24),
        max in 1usize..8000,
    ) {
        let d: Vec<ToolDecl> = sizes
            .iter()
            .enumerate()
            .map(|(i, n)| big(&format!("t{i:03}"), *n))
            .collect();
        for f in [ToolFormat::Mcp, ToolFormat::Markdown, ToolFormat::OpenAi] {
            check_walk(&d, f, max);
        }
    }
}

/// The texts the catalog keeps per tool are `render_one`'s in every format, byte for byte, for
/// every tool of the packs (with and without canisters), `commit` and every builtin.
#[test]
fn kept_texts_are_render_ones() {
    use tool_host_core::bus::kept::{Rendered, FORMATS};
    let plans = build_tool_plans(&[pack("icrc1").unwrap(), pack("icrc2").unwrap()]);
    let mut all = decls();
    all.extend(host_decls(&plans, &[]));
    all.push(big("big", 5000));
    for d in &all {
        let r = Rendered::new(d);
        for f in FORMATS {
            assert_eq!(r.text(f), page::render_one(d, f), "{} in {f:?}", d.name);
        }
        assert_eq!(
            r.mcp_hash(),
            page::item_hash(&r.mcp().as_str()),
            "{}",
            d.name
        );
    }
}

proptest! {
    /// A text's hash from its pieces (a spliced tool's MCP text around its part) is the hash
    /// of the pieces put together, however the text is cut.
    #[test]
    fn a_hash_of_pieces_is_the_hash_of_their_text(
        text in "\\PC{0,40}",
        cuts in prop::collection::vec(0usize..=40, 0..5),
    ) {
        let mut at: Vec<usize> = cuts
            .into_iter()
            .map(|c| c.min(text.len()))
            .filter(|&c| text.is_char_boundary(c))
            .collect();
        at.push(0);
        at.push(text.len());
        at.sort();
        let pieces: Vec<&str> = at.windows(2).map(|w| &text[w[0]..w[1]]).collect();
        prop_assert_eq!(page::item_hash_of(&pieces), page::item_hash(&text));
    }
}

/// A tool's hash is pinned: the list's fingerprint (and so every cursor given) is made of
/// them, and a change of how a text is hashed would turn every cursor stale.
#[test]
fn item_hashes_are_pinned() {
    for (text, want) in [
        ("", 0x47e4_4973_440b_083c),
        ("a", 0x64e4_bb45_1ff8_9ba2),
        ("abcdefgh", 0xec47_fc52_c5da_08c8),
        ("abcdefghi", 0x633a_bd31_63f9_49ce),
        ("{\"name\":\"x\",\"inputSchema\":{}}", 0xee32_6216_9c1b_257b),
        (
            "héllo wörld, a longer text of several words",
            0xc1eb_5a5e_76c8_c6ac,
        ),
    ] {
        assert_eq!(page::item_hash(text), want, "{text:?}");
    }
}
