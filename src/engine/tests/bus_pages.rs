//! `list_tools_page`: the pages together are `list_tools`' list in every format; a page keeps
//! to its bound; a cursor is refused once the list changed (a builtin, a form) and read again
//! after an upgrade that changed nothing; bad bounds and cursors are refused.

mod common;
use common::*;
use serde_json::Value;
use tool_host_engine::bus::{list_tools, list_tools_page};
use tool_host_engine::types::*;

fn page(
    w: &World,
    format: ToolFormat,
    cursor: Option<String>,
    max: Option<u32>,
) -> ApiResult<ToolsPage> {
    list_tools_page(
        w,
        ListToolsArgs {
            format: Some(format),
            cursor,
            max_bytes: max,
        },
    )
}

fn walk(w: &World, format: ToolFormat, max: u32) -> Vec<ToolsPage> {
    let mut pages: Vec<ToolsPage> = vec![];
    let mut cursor = None;
    loop {
        let p = page(w, format, cursor, Some(max)).unwrap();
        cursor = p.next.clone();
        pages.push(p);
        if cursor.is_none() {
            return pages;
        }
        assert!(pages.len() < 1000);
    }
}

#[test]
fn the_pages_are_the_whole_list_in_every_format() {
    let w = World::new().setup();
    w.builtins(&["calculate", "current_time", "escalate"], &[])
        .unwrap();
    for f in [
        ToolFormat::Mcp,
        ToolFormat::OpenAi,
        ToolFormat::OpenAiResponses,
        ToolFormat::Anthropic,
        ToolFormat::JsonSchema,
    ] {
        let whole: Value = serde_json::from_str(&list_tools(&*w, Some(f))).unwrap();
        let whole = whole.as_array().unwrap().clone();
        for max in [1024u32, 4096, 24 * 1024] {
            let pages = walk(&w, f, max);
            let mut all = vec![];
            for p in &pages {
                assert!(p.tools.len() <= max as usize || p.count == 1, "{f:?} {max}");
                assert_eq!(p.total as usize, whole.len());
                let v: Value = serde_json::from_str(&p.tools).unwrap();
                assert_eq!(v.as_array().unwrap().len(), p.count as usize);
                all.extend(v.as_array().unwrap().iter().cloned());
            }
            assert_eq!(all, whole, "{f:?} in pages of {max}");
            if max == 1024 {
                assert!(pages.len() > 3, "{f:?}: {} pages of 1 KiB", pages.len());
            }
        }
    }
    // Markdown: the pages' sections are the listing's.
    let whole = list_tools(&*w, Some(ToolFormat::Markdown));
    let head = whole.find("\n## ").unwrap();
    let mut joined = whole[..head].to_string();
    for p in walk(&w, ToolFormat::Markdown, 2048) {
        joined.push_str(&p.tools[head..]);
    }
    assert_eq!(joined, whole);
}

#[test]
fn the_default_page_is_the_mcp_list_within_24_kib() {
    let w = World::new().setup();
    let p = list_tools_page(&*w, ListToolsArgs::default()).unwrap();
    let first = page(&w, ToolFormat::Mcp, None, Some(24 * 1024)).unwrap();
    assert_eq!(p, first);
    assert!(p.tools.len() <= 24 * 1024);
}

#[test]
fn a_cursor_is_stale_once_the_list_changed() {
    let w = World::new().setup();
    let p = page(&w, ToolFormat::Mcp, None, Some(1024)).unwrap();
    let cursor = p.next.clone().expect("more than one page");
    // Read twice, and after an upgrade of the same code: the same list.
    let second = page(&w, ToolFormat::Mcp, Some(cursor.clone()), Some(1024)).unwrap();
    assert_eq!(
        page(&w, ToolFormat::Mcp, Some(cursor.clone()), Some(1024)),
        Ok(second.clone())
    );
    w.upgrade();
    assert_eq!(
        page(&w, ToolFormat::Mcp, Some(cursor.clone()), Some(1024)),
        Ok(second)
    );
    // A builtin enabled: another list.
    w.builtins(&["calculate"], &[]).unwrap();
    let e = page(&w, ToolFormat::Mcp, Some(cursor.clone()), Some(1024)).unwrap_err();
    assert_eq!(e.code, "STALE_CURSOR", "{e:?}");
    // In another format too (the cursor names the list, not the format).
    let e = page(&w, ToolFormat::Markdown, Some(cursor), None).unwrap_err();
    assert_eq!(e.code, "STALE_CURSOR");
}

#[test]
fn bad_bounds_and_cursors_are_refused() {
    let w = World::new().setup();
    for max in [0u32, 1023, 1024 * 1024 + 1, u32::MAX] {
        let e = page(&w, ToolFormat::Mcp, None, Some(max)).unwrap_err();
        assert_eq!(e.code, "INVALID_ARGUMENT", "{max}");
        assert!(e.message.contains("max_bytes"), "{}", e.message);
    }
    for c in ["", "x", "0123456789abcdef.zz", &"a".repeat(400)] {
        let e = page(&w, ToolFormat::Mcp, Some(c.to_string()), None).unwrap_err();
        assert_eq!(e.code, "INVALID_ARGUMENT", "{c:?}");
    }
}
