//! Stable memory with an undo journal.
//!
//! Every execution must be able to roll back its stable-memory writes when it traps.
//! Copying the whole stable memory per execution would be far too slow for canisters
//! holding large stable structures, so writes record the before-image of each
//! 4 KiB page the first time the page is touched in a transaction; a rollback puts those
//! pages back and restores the size. Storage is allocated lazily per Wasm page, so a
//! large `stable64_grow` costs nothing until the pages are written.

use std::collections::HashMap;

/// Size of a Wasm (and stable memory) page.
pub const WASM_PAGE_SIZE: u64 = 65_536;
/// Granularity of the undo journal.
const JOURNAL_PAGE: u64 = 4_096;
const JOURNAL_PAGES_PER_CHUNK: u64 = WASM_PAGE_SIZE / JOURNAL_PAGE;

/// Default limit: the IC's stable memory limit of 500 GiB.
pub const DEFAULT_MAX_STABLE_PAGES: u64 = 500 * 1024 * 1024 * 1024 / WASM_PAGE_SIZE;

/// A canister's stable memory.
#[derive(Debug)]
pub struct StableMemory {
    /// One entry per Wasm page; `None` means the page is all zeroes.
    chunks: Vec<Option<Box<[u8]>>>,
    max_pages: u64,
    journal: Option<Journal>,
}

/// Before-images of the pages touched since `begin`.
#[derive(Debug)]
struct Journal {
    size_pages: u64,
    /// Journal page index -> bytes before the transaction (`None` = zero page).
    before: HashMap<u64, Option<Box<[u8]>>>,
}

/// An out-of-bounds stable memory access.
#[derive(Debug, PartialEq, Eq)]
pub struct OutOfBounds;

impl Default for StableMemory {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_STABLE_PAGES)
    }
}

impl StableMemory {
    /// An empty stable memory that can grow up to `max_pages` Wasm pages.
    pub fn new(max_pages: u64) -> Self {
        Self {
            chunks: Vec::new(),
            max_pages,
            journal: None,
        }
    }

    /// A stable memory holding `image`, zero-filled to whole pages (no journal open).
    ///
    /// # Panics
    /// If the image is over the default limit.
    pub fn from_image(image: &[u8]) -> Self {
        let mut m = Self::default();
        m.grow((image.len() as u64).div_ceil(WASM_PAGE_SIZE))
            .expect("the image fits the stable memory limit");
        // Zero pages stay unallocated: an image is mostly zeroes.
        for (n, chunk) in image.chunks(WASM_PAGE_SIZE as usize).enumerate() {
            if chunk.iter().any(|b| *b != 0) {
                m.write(n as u64 * WASM_PAGE_SIZE, chunk)
                    .expect("in bounds");
            }
        }
        m
    }

    /// Current size in Wasm pages.
    pub fn size_pages(&self) -> u64 {
        self.chunks.len() as u64
    }

    /// Current size in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.size_pages() * WASM_PAGE_SIZE
    }

    /// Grows by `new_pages`; returns the previous size, or `None` if the limit would be exceeded.
    pub fn grow(&mut self, new_pages: u64) -> Option<u64> {
        let old = self.size_pages();
        let new = old.checked_add(new_pages)?;
        if new > self.max_pages {
            return None;
        }
        self.chunks.resize_with(new as usize, || None);
        Some(old)
    }

    /// Reads `dst.len()` bytes at `offset`.
    pub fn read(&self, offset: u64, dst: &mut [u8]) -> Result<(), OutOfBounds> {
        self.check(offset, dst.len() as u64)?;
        for (chunk, in_chunk, done, n) in pieces(offset, dst.len()) {
            match &self.chunks[chunk] {
                Some(bytes) => dst[done..done + n].copy_from_slice(&bytes[in_chunk..in_chunk + n]),
                None => dst[done..done + n].fill(0),
            }
        }
        Ok(())
    }

    /// Writes `src` at `offset`, journaling before-images if a transaction is open.
    pub fn write(&mut self, offset: u64, src: &[u8]) -> Result<(), OutOfBounds> {
        self.check(offset, src.len() as u64)?;
        if src.is_empty() {
            return Ok(());
        }
        self.journal_range(offset, src.len() as u64);
        for (chunk, in_chunk, done, n) in pieces(offset, src.len()) {
            let bytes = self.chunks[chunk]
                .get_or_insert_with(|| vec![0u8; WASM_PAGE_SIZE as usize].into_boxed_slice());
            bytes[in_chunk..in_chunk + n].copy_from_slice(&src[done..done + n]);
        }
        Ok(())
    }

    /// Starts a transaction: subsequent writes are journaled until `commit` or `rollback`.
    ///
    /// Starting a transaction while one is open keeps the open one (its before-images
    /// are older, so they are the ones a rollback must restore).
    pub fn begin(&mut self) {
        if self.journal.is_none() {
            self.journal = Some(Journal {
                size_pages: self.size_pages(),
                before: HashMap::new(),
            });
        }
    }

    /// Keeps all changes since `begin`.
    pub fn commit(&mut self) {
        self.journal = None;
    }

    /// Undoes all changes since `begin` (size and contents).
    pub fn rollback(&mut self) {
        let Some(journal) = self.journal.take() else {
            return;
        };
        self.chunks.truncate(journal.size_pages as usize);
        for (page, before) in journal.before {
            let chunk = (page / JOURNAL_PAGES_PER_CHUNK) as usize;
            if chunk >= self.chunks.len() {
                continue;
            }
            let start = ((page % JOURNAL_PAGES_PER_CHUNK) * JOURNAL_PAGE) as usize;
            let end = start + JOURNAL_PAGE as usize;
            match (&mut self.chunks[chunk], before) {
                (Some(bytes), Some(old)) => bytes[start..end].copy_from_slice(&old),
                (Some(bytes), None) => bytes[start..end].fill(0),
                (None, _) => {}
            }
        }
    }

    /// Number of journaled pages in the open transaction.
    #[cfg(test)]
    pub fn journaled_pages(&self) -> usize {
        self.journal.as_ref().map_or(0, |j| j.before.len())
    }

    fn check(&self, offset: u64, len: u64) -> Result<(), OutOfBounds> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size_bytes() => Ok(()),
            _ => Err(OutOfBounds),
        }
    }

    fn journal_range(&mut self, offset: u64, len: u64) {
        let Some(journal) = self.journal.as_mut() else {
            return;
        };
        let first = offset / JOURNAL_PAGE;
        let last = (offset + len - 1) / JOURNAL_PAGE;
        // Pages beyond the size at `begin` disappear on rollback; no before-image needed.
        let limit = journal.size_pages * JOURNAL_PAGES_PER_CHUNK;
        if first >= limit {
            return;
        }
        for page in first..=last.min(limit - 1) {
            journal.before.entry(page).or_insert_with(|| {
                let chunk = (page / JOURNAL_PAGES_PER_CHUNK) as usize;
                self.chunks[chunk].as_ref().map(|bytes| {
                    let start = ((page % JOURNAL_PAGES_PER_CHUNK) * JOURNAL_PAGE) as usize;
                    bytes[start..start + JOURNAL_PAGE as usize]
                        .to_vec()
                        .into_boxed_slice()
                })
            });
        }
    }
}

/// The pieces of `len` bytes at `offset`, one per page they touch: (page, offset in the page,
/// offset in the caller's buffer, length). Reads and writes walk stable memory alike.
fn pieces(offset: u64, len: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    let mut done = 0usize;
    std::iter::from_fn(move || {
        if done >= len {
            return None;
        }
        let pos = offset + done as u64;
        let page = (pos / WASM_PAGE_SIZE) as usize;
        let in_page = (pos % WASM_PAGE_SIZE) as usize;
        let n = (WASM_PAGE_SIZE as usize - in_page).min(len - done);
        let piece = (page, in_page, done, n);
        done += n;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grow_read_write() {
        let mut m = StableMemory::new(10);
        assert_eq!(m.grow(2), Some(0));
        assert_eq!(m.size_bytes(), 2 * WASM_PAGE_SIZE);
        m.write(65_530, b"0123456789").unwrap();
        let mut buf = [0u8; 12];
        m.read(65_529, &mut buf).unwrap();
        assert_eq!(&buf, b"\x000123456789\x00");
        assert_eq!(m.write(2 * WASM_PAGE_SIZE - 1, b"ab"), Err(OutOfBounds));
        assert_eq!(m.grow(9), None);
        assert_eq!(m.grow(8), Some(2));
    }

    #[test]
    fn rollback_restores_contents_and_size() {
        let mut m = StableMemory::new(100);
        m.grow(1);
        m.write(10, b"committed").unwrap();
        m.begin();
        m.write(10, b"CHANGED").unwrap();
        m.write(40_000, b"new").unwrap();
        m.grow(3);
        m.write(3 * WASM_PAGE_SIZE, b"beyond").unwrap();
        assert_eq!(m.journaled_pages(), 2);
        m.rollback();
        assert_eq!(m.size_pages(), 1);
        let mut buf = [0u8; 9];
        m.read(10, &mut buf).unwrap();
        assert_eq!(&buf, b"committed");
        let mut buf = [0u8; 3];
        m.read(40_000, &mut buf).unwrap();
        assert_eq!(&buf, &[0, 0, 0]);
    }

    #[test]
    fn commit_keeps_changes() {
        let mut m = StableMemory::new(100);
        m.begin();
        m.grow(1);
        m.write(0, b"x").unwrap();
        m.commit();
        m.begin();
        m.rollback();
        let mut buf = [0u8; 1];
        m.read(0, &mut buf).unwrap();
        assert_eq!(&buf, b"x");
    }
}
