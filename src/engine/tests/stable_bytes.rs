//! Where a settled intent's stable memory goes, structure by structure: a world's settled
//! transfer copied through the engine's own insert path (`lifecycle::clone_settled_intents`,
//! as the benchmark's fill does: each copy for an owner of its own, its prepare counted in the
//! usage map) to 10 000, 100 000 and 1 000 000 intents, and each structure's growth per intent
//! counted in its own pages (the benchmark's figure counts the manager's 512 KiB buckets).
//! Natively, and slow in a debug build, so run on demand:
//! `cargo test --release -p tool-host-engine --test stable_bytes -- --ignored --nocapture`.

mod common;
use common::*;
use ic_stable_structures::memory_manager::{MemoryId, MemoryManager};
use ic_stable_structures::Memory;
use tool_host_engine::memory::{self as m, WASM_PAGE};

fn pages(w: &World) -> Vec<(MemoryId, u64)> {
    let mm = MemoryManager::init_with_bucket_size(w.memory.clone(), 8);
    m::ALL.iter().map(|id| (*id, mm.get(*id).size())).collect()
}

fn name(id: MemoryId) -> &'static str {
    match id {
        m::HEAD_PAGES => "intent heads",
        m::INTENT_BODIES => "intent bodies",
        m::OWNER_INTENTS => "owner index",
        m::OWNER_TOTALS => "owners' kept counts (layout 6's B-tree)",
        m::OWNER_TOTALS_TABLE => "owners' kept counts",
        m::USAGE_TABLE => "tool usage counts",
        m::TOOL_NAMES => "tool names",
        m::DUE => "timer tasks (the prune task)",
        m::TOOL_USAGE => "tool usage counts (layout 6's B-tree)",
        m::STAMP_FLOORS => "stamp floors (layout 7's B-tree)",
        m::STAMP_FLOOR_TABLE => "stamp floors",
        _ => "other",
    }
}

#[test]
#[ignore = "a million intents natively: run in release, on demand (see the module's note)"]
fn stable_memory_per_settled_intent_by_structure() {
    let w = World::new().setup();
    let (a, d) = w.prepare("1.5");
    assert_eq!(
        w.confirm(owner(), a, &d).unwrap().outcome.as_deref(),
        Some("success")
    );
    w.run_for(25, HOUR);
    let start = pages(&w);
    let mut held = 0;
    for n in [10_000u64, 90_000, 900_000] {
        tool_host_engine::lifecycle::clone_settled_intents(&*w, a, n).unwrap();
        held += n;
        let now = pages(&w);
        let mut total = 0;
        println!("{held} intents, bytes per intent:");
        for ((id, p), (_, p0)) in now.iter().zip(&start) {
            let per = (p - p0) * WASM_PAGE / held;
            total += per;
            if per > 0 {
                println!("  {per:>5}  {} ({id:?})", name(*id));
            }
        }
        println!("  {total:>5}  in all");
        {
            // Where the keys live: a full bucket sends its key to the B-tree beside its table.
            let s = w.state.borrow();
            println!(
                "  (in the table, in the B-tree: kept counts {:?}, open counts {:?}, floors {:?})",
                s.owner_totals.split(),
                s.open_counts.split(),
                s.stamp_floors.split()
            );
        }
        let bodies = now
            .iter()
            .zip(&start)
            .find(|((id, _), _)| *id == m::INTENT_BODIES);
        let ((_, p), (_, p0)) = bodies.unwrap();
        // One 256-byte chunk a settled body, and the last day's plain bodies (~1/30, four
        // chunks each).
        assert!(
            (p - p0) * WASM_PAGE / held <= 300,
            "bodies take a chunk each"
        );
        if held == 1_000_000 {
            assert!(
                total <= 1024,
                "{total} bytes per settled intent at 1 000 000"
            );
        }
    }
    assert_eq!(w.state.borrow().check_indexes(), Ok(()));
}
