//! Intent heads addressed by id (stored layout 3): a directory of one entry per group of
//! [`PER_PAGE`] ids, and pages of fixed slots, each slot the record of one id. Ids are handed
//! out in sequence, so a head is found with two reads and written in place with one, whatever
//! the number of intents kept; in a B-tree every read and write of a head searched a tree as
//! deep as the intents were many (~7 levels at 1 000 000 intents, each level a node loaded
//! and, on a write, saved). A page whose slots are all empty (its intents pruned) goes to a
//! free list and serves a later group, so what stays of a pruned intent is its group's
//! directory entry: 4 bytes per [`PER_PAGE`] ids ever handed out.
//!
//! Two memories: the directory (a header, then a `u32` per group: its page + 1, 0 for none)
//! and the pages (page `k` at `k * PAGE`, 4 KiB aligned, so a slot's write dirties one page).
//! Both are written first with the first head, so a fresh install takes no bucket for them.

use crate::memory::{grow_to, WASM_PAGE};
use ic_stable_structures::Memory;

/// A page's bytes: its header, then [`PER_PAGE`] slots.
pub const PAGE: u64 = 4096;
/// The page's header: slots in use (`u32`), the next free page + 1 (`u32`, in the free list
/// only), and the group it serves (`u64`).
const PAGE_HEADER: u64 = 16;
/// A slot: the record's length (`u16`, 0 for an empty slot), then the record.
pub const SLOT: u64 = 340;
pub const PER_PAGE: u64 = 12;
/// The longest record a slot holds.
pub const INLINE: usize = (SLOT - 2) as usize;
const DIR_HEADER: u64 = 64;
/// The newest groups [`HeadTable::newest`] looks through (one 4 KiB read of the directory).
const NEWEST_GROUPS: u64 = 1024;
pub const MAGIC: &[u8; 4] = b"THT\x01";

/// What a read of the heads that cannot go on says when it traps (the message is rolled back;
/// the checks read the same through the `_checked` functions and report instead).
pub(crate) fn or_trap<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| panic!("stored intent head: {e}"))
}

/// The directory's header. Absent on a memory never written: an empty table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Header {
    /// Heads held.
    count: u64,
    /// Pages ever handed out.
    high: u32,
    /// The first free page + 1; 0 when none is free.
    free_head: u32,
    /// Pages in the free list.
    free_len: u32,
    /// Ids below it may be held by the B-tree that kept heads before this table (layouts 1
    /// and 2); at or above it, never: it is one above the highest id that B-tree held when the
    /// table was first written, and ids are never handed out twice.
    first_id: u64,
    /// Groups the directory has room for.
    groups: u64,
}

/// Heads by id; see the module's comment.
pub struct HeadTable<M: Memory> {
    dir: M,
    pages: M,
}

impl<M: Memory> HeadTable<M> {
    pub fn init(dir: M, pages: M) -> Self {
        HeadTable { dir, pages }
    }

    fn header(&self) -> Result<Option<Header>, String> {
        if self.dir.size() == 0 {
            return Ok(None);
        }
        let mut b = [0u8; 48];
        self.dir.read(0, &mut b);
        if b.iter().all(|&x| x == 0) {
            return Ok(None);
        }
        if b[..4] != MAGIC[..] {
            return Err(format!(
                "the intent head table's header starts {:02x?}, not {MAGIC:02x?}",
                &b[..4]
            ));
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let (page, slot, per) = (u32_at(4), u32_at(8), u32_at(12));
        if (u64::from(page), u64::from(slot), u64::from(per)) != (PAGE, SLOT, PER_PAGE) {
            return Err(format!(
                "the intent head table has pages of {page} bytes with {per} slots of {slot}; this code reads {PAGE}, {PER_PAGE} and {SLOT}"
            ));
        }
        Ok(Some(Header {
            count: u64_at(16),
            high: u32_at(24),
            free_head: u32_at(28),
            free_len: u32_at(32),
            first_id: u64_at(36),
            groups: u32_at(44).into(),
        }))
    }

    fn header_or_trap(&self) -> Option<Header> {
        or_trap(self.header())
    }

    fn set_header(&mut self, h: Header) {
        let mut b = [0u8; 48];
        b[..4].copy_from_slice(MAGIC);
        b[4..8].copy_from_slice(&(PAGE as u32).to_le_bytes());
        b[8..12].copy_from_slice(&(SLOT as u32).to_le_bytes());
        b[12..16].copy_from_slice(&(PER_PAGE as u32).to_le_bytes());
        b[16..24].copy_from_slice(&h.count.to_le_bytes());
        b[24..28].copy_from_slice(&h.high.to_le_bytes());
        b[28..32].copy_from_slice(&h.free_head.to_le_bytes());
        b[32..36].copy_from_slice(&h.free_len.to_le_bytes());
        b[36..44].copy_from_slice(&h.first_id.to_le_bytes());
        let groups = u32::try_from(h.groups).expect("fewer than 2^32 groups of ids");
        b[44..48].copy_from_slice(&groups.to_le_bytes());
        grow_to(
            &self.dir,
            DIR_HEADER + 4 * h.groups,
            "intent head directory",
        );
        self.dir.write(0, &b);
    }

    /// Whether the table was ever written, and the first id only it may hold.
    pub fn first_id(&self) -> Option<u64> {
        self.header_or_trap().map(|h| h.first_id)
    }

    /// Starts the table: ids at or above `first_id` are held here only.
    pub fn start(&mut self, first_id: u64) {
        assert!(self.header_or_trap().is_none(), "the head table is started");
        self.set_header(Header {
            first_id,
            ..Header::default()
        });
    }

    /// Heads held.
    pub fn len(&self) -> u64 {
        self.header_or_trap().map_or(0, |h| h.count)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The header, with its counts checked against the memories (a corrupt count is reported,
    /// never looped over or read past): what the checks and listings start from.
    fn header_checked(&self) -> Result<Option<Header>, String> {
        let Some(h) = self.header()? else {
            return Ok(None);
        };
        self.directory_holds(&h)?;
        if u64::from(h.high) * PAGE > self.pages.size() * WASM_PAGE {
            return Err(format!(
                "the intent head table's header counts {} pages, more than its memory holds",
                h.high
            ));
        }
        Ok(Some(h))
    }

    /// The directory's memory holds every group the header counts (it is grown with the
    /// header): a header saying more is reported, not read past.
    fn directory_holds(&self, h: &Header) -> Result<(), String> {
        let need = DIR_HEADER + 4 * h.groups;
        if need > self.dir.size() * WASM_PAGE {
            return Err(format!(
                "the intent head table's header counts {} groups, more than its directory holds",
                h.groups
            ));
        }
        Ok(())
    }

    /// The page serving `id`'s group, if any. Bounded by the directory's memory rather than
    /// the header's count: no header read on the hot path (`check` sees every entry past the
    /// count is empty).
    fn page_of(&self, id: u64) -> Option<u32> {
        let at = DIR_HEADER.checked_add((id / PER_PAGE).checked_mul(4)?)?;
        if at + 4 > self.dir.size() * WASM_PAGE {
            return None;
        }
        let mut b = [0u8; 4];
        self.dir.read(at, &mut b);
        u32::from_le_bytes(b).checked_sub(1)
    }

    fn slot_at(page: u32, id: u64) -> u64 {
        u64::from(page) * PAGE + PAGE_HEADER + (id % PER_PAGE) * SLOT
    }

    /// The slot's record, if it holds one; a length no slot holds is an error.
    fn read_slot_checked(&self, page: u32, id: u64) -> Result<Option<Vec<u8>>, String> {
        let at = Self::slot_at(page, id);
        if at + SLOT > self.pages.size() * WASM_PAGE {
            return Err(format!(
                "intent {id}'s page {page} is past the table's pages"
            ));
        }
        let mut b = vec![0u8; SLOT as usize];
        self.pages.read(at, &mut b);
        let len = usize::from(u16::from_le_bytes([b[0], b[1]]));
        if len == 0 {
            return Ok(None);
        }
        if len > INLINE {
            return Err(format!(
                "intent {id}'s slot says {len} bytes, more than a slot holds"
            ));
        }
        b.truncate(2 + len);
        b.drain(..2);
        Ok(Some(b))
    }

    /// The slot's record, if it holds one; one that cannot be read traps, naming why.
    fn read_slot(&self, page: u32, id: u64) -> Option<Vec<u8>> {
        or_trap(self.read_slot_checked(page, id))
    }

    /// The record of `id`.
    pub fn get(&self, id: u64) -> Option<Vec<u8>> {
        let page = self.page_of(id)?;
        self.read_slot(page, id)
    }

    /// The record of `id`, or why it cannot be read, without trapping (the checks).
    pub fn get_checked(&self, id: u64) -> Result<Option<Vec<u8>>, String> {
        match self.page_of(id) {
            Some(page) => self.read_slot_checked(page, id),
            None => Ok(None),
        }
    }

    pub fn contains(&self, id: u64) -> bool {
        self.get(id).is_some()
    }

    fn page_header(&self, page: u32) -> (u32, u32, u64) {
        let mut b = [0u8; PAGE_HEADER as usize];
        self.pages.read(u64::from(page) * PAGE, &mut b);
        (
            u32::from_le_bytes(b[..4].try_into().expect("4 bytes")),
            u32::from_le_bytes(b[4..8].try_into().expect("4 bytes")),
            u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
        )
    }

    fn set_page_header(&mut self, page: u32, live: u32, next_free: u32, group: u64) {
        let mut b = [0u8; PAGE_HEADER as usize];
        b[..4].copy_from_slice(&live.to_le_bytes());
        b[4..8].copy_from_slice(&next_free.to_le_bytes());
        b[8..16].copy_from_slice(&group.to_le_bytes());
        self.pages.write(u64::from(page) * PAGE, &b);
    }

    fn set_dir(&mut self, group: u64, entry: u32) {
        self.dir.write(DIR_HEADER + 4 * group, &entry.to_le_bytes());
    }

    /// Writes the record of `id` (at most [`INLINE`] bytes) and answers the one it replaced.
    /// The table must be started.
    pub fn put(&mut self, id: u64, record: &[u8]) -> Option<Vec<u8>> {
        let len = u16::try_from(record.len())
            .ok()
            .filter(|l| usize::from(*l) <= INLINE && *l > 0)
            .unwrap_or_else(|| panic!("an intent head of {} bytes is not a slot's", record.len()));
        let mut buf = Vec::with_capacity(2 + record.len());
        buf.extend_from_slice(&len.to_le_bytes());
        buf.extend_from_slice(record);
        if let Some(page) = self.page_of(id) {
            let old = self.read_slot(page, id);
            self.pages.write(Self::slot_at(page, id), &buf);
            if old.is_none() {
                let (live, next, group) = self.page_header(page);
                self.set_page_header(page, live + 1, next, group);
                let mut h = self.header_or_trap().expect("a page means a header");
                h.count += 1;
                self.set_header(h);
            }
            return old;
        }
        let mut h = self
            .header_or_trap()
            .expect("the head table is started before a head is written");
        let group = id / PER_PAGE;
        let page = if h.free_head != 0 {
            let p = h.free_head - 1;
            h.free_head = self.page_header(p).1;
            h.free_len = h.free_len.checked_sub(1).unwrap_or_else(|| {
                panic!("stored intent head: the free list is longer than its count")
            });
            // A page from the free list still holds its last group's empty slots.
            self.pages.write(u64::from(p) * PAGE, &[0u8; PAGE as usize]);
            p
        } else {
            let p = h.high;
            h.high = h.high.checked_add(1).expect("fewer than 2^32 head pages");
            grow_to(&self.pages, u64::from(h.high) * PAGE, "intent head pages");
            p
        };
        h.count += 1;
        h.groups = h.groups.max(group + 1);
        self.set_header(h);
        self.set_dir(group, page + 1);
        self.set_page_header(page, 1, 0, group);
        self.pages.write(Self::slot_at(page, id), &buf);
        None
    }

    /// Empties the slot of `id` and answers its record; a page left with no record goes to
    /// the free list.
    pub fn remove(&mut self, id: u64) -> Option<Vec<u8>> {
        let page = self.page_of(id)?;
        let old = self.read_slot(page, id)?;
        self.pages.write(Self::slot_at(page, id), &[0, 0]);
        let mut h = self.header_or_trap().expect("a page means a header");
        h.count -= 1;
        let (live, _, group) = self.page_header(page);
        let live = live.checked_sub(1).unwrap_or_else(|| {
            panic!("stored intent head: page {page} counts no record, and holds intent {id}'s")
        });
        if live == 0 {
            self.set_dir(group, 0);
            self.set_page_header(page, 0, h.free_head, group);
            h.free_head = page + 1;
            h.free_len += 1;
        } else {
            self.set_page_header(page, live, 0, group);
        }
        self.set_header(h);
        Some(old)
    }

    /// The highest id held among the newest [`NEWEST_GROUPS`] groups, if they hold any: what an
    /// upgrade reads to see the newest records decode (a bounded read, whatever the table
    /// holds; older groups are all pruned or hold older heads).
    pub fn newest(&self) -> Result<Option<u64>, String> {
        let Some(h) = self.header_checked()? else {
            return Ok(None);
        };
        let from = h.groups.saturating_sub(NEWEST_GROUPS);
        let mut entries = vec![0u8; ((h.groups - from) * 4) as usize];
        self.dir.read(DIR_HEADER + 4 * from, &mut entries);
        for (k, e) in entries.chunks_exact(4).enumerate().rev() {
            let Some(p) = u32::from_le_bytes(e.try_into().expect("4 bytes")).checked_sub(1) else {
                continue;
            };
            let g = from + k as u64;
            if p >= h.high {
                return Err(format!("group {g}'s page {p} is past the {} pages", h.high));
            }
            for id in (g * PER_PAGE..(g + 1) * PER_PAGE).rev() {
                if self.read_slot_checked(p, id)?.is_some() {
                    return Ok(Some(id));
                }
            }
        }
        Ok(None)
    }

    /// Every id held, ascending, or why a slot cannot be read, without trapping (the checks).
    pub fn ids_checked(&self) -> Result<Vec<u64>, String> {
        let groups = self.header_checked()?.map_or(0, |h| h.groups);
        let mut out = vec![];
        for g in 0..groups {
            if let Some(p) = self.page_of(g * PER_PAGE) {
                for id in g * PER_PAGE..(g + 1) * PER_PAGE {
                    if self.read_slot_checked(p, id)?.is_some() {
                        out.push(id);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Every id held, ascending (reads every page: checks and upgrades, never a hot path).
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        let groups = or_trap(self.header_checked()).map_or(0, |h| h.groups);
        (0..groups).flat_map(move |g| {
            let page = self.page_of(g * PER_PAGE);
            (g * PER_PAGE..(g + 1) * PER_PAGE)
                .filter(move |id| page.is_some_and(|p| self.read_slot(p, *id).is_some()))
        })
    }

    /// The directory, the pages' counts and the free list agree: every page serves the group
    /// that names it or is free, once; the counts are the records held.
    pub fn check(&self) -> Result<(), String> {
        let Some(h) = self.header_checked()? else {
            return Ok(());
        };
        let mut owner: Vec<Option<u64>> = vec![None; h.high as usize];
        let mut count = 0u64;
        for g in 0..h.groups {
            let Some(p) = self.page_of(g * PER_PAGE) else {
                continue;
            };
            let slot = owner
                .get_mut(p as usize)
                .ok_or_else(|| format!("group {g}'s page {p} is past the {} pages", h.high))?;
            if let Some(other) = slot {
                return Err(format!("page {p} serves groups {other} and {g}"));
            }
            *slot = Some(g);
            let (live, _, group) = self.page_header(p);
            if group != g {
                return Err(format!("page {p} serves group {g} but says {group}"));
            }
            let mut held = 0u32;
            for id in g * PER_PAGE..(g + 1) * PER_PAGE {
                held += u32::from(self.read_slot_checked(p, id)?.is_some());
            }
            if held != live || held == 0 {
                return Err(format!("page {p} holds {held} records and counts {live}"));
            }
            count += u64::from(held);
        }
        if count != h.count {
            return Err(format!(
                "the table holds {count} heads and counts {}",
                h.count
            ));
        }
        let end = self.dir.size() * WASM_PAGE;
        let past = DIR_HEADER + 4 * h.groups;
        let mut rest = vec![0u8; end.saturating_sub(past) as usize];
        self.dir.read(past, &mut rest);
        if let Some(k) = rest.iter().position(|b| *b != 0) {
            return Err(format!(
                "group {} has a page, past the {} groups the header counts",
                h.groups + k as u64 / 4,
                h.groups
            ));
        }
        let (mut next, mut free) = (h.free_head, 0u32);
        while next != 0 {
            let p = next - 1;
            match owner.get_mut(p as usize) {
                Some(slot @ None) => *slot = Some(u64::MAX),
                _ => {
                    return Err(format!(
                        "free page {p} is in use, past the end or listed twice"
                    ))
                }
            }
            free += 1;
            next = self.page_header(p).1;
        }
        if free != h.free_len {
            return Err(format!(
                "the free list holds {free} pages, its count says {}",
                h.free_len
            ));
        }
        if let Some(p) = owner.iter().position(Option::is_none) {
            return Err(format!("page {p} serves no group and is not free"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ic_stable_structures::VectorMemory;
    use std::collections::BTreeMap;

    fn table() -> HeadTable<VectorMemory> {
        let mut t = HeadTable::init(VectorMemory::default(), VectorMemory::default());
        t.start(1);
        t
    }

    #[test]
    fn a_table_never_written_is_empty_and_takes_no_memory() {
        let t = HeadTable::init(VectorMemory::default(), VectorMemory::default());
        assert_eq!(t.first_id(), None);
        assert_eq!(t.get(5), None);
        assert_eq!(t.len(), 0);
        assert_eq!(t.check(), Ok(()));
        assert_eq!((t.dir.size(), t.pages.size()), (0, 0));
    }

    /// Random puts, rewrites and removes agree with a map after every step; pages emptied
    /// are reused, so the pages in use follow the groups held, not the ids ever written.
    #[test]
    fn the_table_is_a_map_and_reuses_emptied_pages() {
        let mut t = table();
        let mut model: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut next = 1u64;
        for step in 0..4_000 {
            match rand(4) {
                0 | 1 => {
                    let id = next;
                    next += 1;
                    let rec = vec![(id % 251) as u8; 1 + rand(INLINE as u64) as usize];
                    assert_eq!(t.put(id, &rec), None, "step {step}");
                    model.insert(id, rec);
                }
                2 if !model.is_empty() => {
                    let id = *model.keys().nth(rand(model.len() as u64) as usize).unwrap();
                    let rec = vec![7; 1 + rand(INLINE as u64) as usize];
                    assert_eq!(t.put(id, &rec).as_ref(), model.get(&id), "step {step}");
                    model.insert(id, rec);
                }
                _ if !model.is_empty() => {
                    // Mostly the oldest, as prunes go.
                    let k = if rand(3) == 0 {
                        rand(model.len() as u64) as usize
                    } else {
                        0
                    };
                    let id = *model.keys().nth(k).unwrap();
                    assert_eq!(t.remove(id), model.remove(&id), "step {step}");
                    assert_eq!(t.remove(id), None);
                }
                _ => {}
            }
            assert_eq!(t.len(), model.len() as u64);
            if step % 97 == 0 {
                assert_eq!(t.check(), Ok(()), "step {step}");
                assert!(t.ids().eq(model.keys().copied()), "step {step}");
                for (id, rec) in &model {
                    assert_eq!(t.get(*id).as_ref(), Some(rec));
                }
            }
        }
        let h = t.header().unwrap().unwrap();
        let groups_held: std::collections::BTreeSet<u64> =
            model.keys().map(|id| id / PER_PAGE).collect();
        assert_eq!(u64::from(h.high - h.free_len), groups_held.len() as u64);
        assert!(
            u64::from(h.high) < next / PER_PAGE,
            "{} pages for {next} ids",
            h.high
        );
    }

    #[test]
    fn a_record_longer_than_a_slot_is_refused() {
        let mut t = table();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            t.put(3, &vec![1; INLINE + 1]);
        }));
        assert!(r.is_err());
        assert_eq!(t.get(3), None);
    }

    /// A directory entry past the groups the header counts (never written by the table) is
    /// seen by the check: reads are bounded by the directory's memory, not the count.
    #[test]
    fn an_entry_past_the_counted_groups_is_caught() {
        let mut t = table();
        t.put(5, &[1, 2, 3]);
        assert_eq!(t.check(), Ok(()));
        t.dir.write(DIR_HEADER + 4 * 7, &1u32.to_le_bytes());
        assert!(t.check().unwrap_err().contains("group 7 has a page"));
    }

    /// The newest head is found below a newest group whose page was freed; a header counting
    /// more groups than the directory holds is reported by `newest` and `check`, not read past.
    #[test]
    fn the_newest_head_is_found_below_emptied_groups_and_a_bad_count_is_reported() {
        let mut t = table();
        for id in 1..=30 {
            t.put(id, &[id as u8]);
        }
        for id in 24..=30 {
            t.remove(id);
        }
        assert_eq!(t.newest(), Ok(Some(23)));
        assert_eq!(t.check(), Ok(()));
        let mut h = t.header().unwrap().unwrap();
        h.groups = 1 << 20;
        let mut b = [0u8; 4];
        b.copy_from_slice(&(h.groups as u32).to_le_bytes());
        t.dir.write(44, &b);
        assert!(t
            .newest()
            .unwrap_err()
            .contains("more than its directory holds"));
        assert!(t
            .check()
            .unwrap_err()
            .contains("more than its directory holds"));
        assert!(t
            .ids_checked()
            .unwrap_err()
            .contains("more than its directory holds"));
        // A page count past the pages' memory likewise.
        let mut t = table();
        t.put(5, &[1]);
        t.dir.write(24, &(1u32 << 20).to_le_bytes());
        let e = t.check().unwrap_err();
        assert!(e.contains("pages, more than its memory holds"), "{e}");
        assert!(t.newest().is_err());
    }

    #[test]
    fn a_header_of_other_slots_is_refused() {
        let t = table();
        t.dir.write(8, &400u32.to_le_bytes());
        assert!(t.header().unwrap_err().contains("this code reads"));
    }
}
