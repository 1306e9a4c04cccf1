//! Values out, in the byte order `candid` writes them; the header comes from `candid` itself.

/// An unsigned LEB128.
pub(super) fn leb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Writes the values of a message after a header (see [`super::header_of`]).
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn new(header: &[u8], capacity: usize) -> Writer {
        let mut buf = Vec::with_capacity(header.len() + capacity);
        buf.extend_from_slice(header);
        Writer { buf }
    }

    pub fn finish(self) -> Vec<u8> {
        self.buf
    }

    pub fn leb(&mut self, v: u64) -> &mut Self {
        leb(&mut self.buf, v);
        self
    }

    pub fn text(&mut self, s: &str) -> &mut Self {
        self.leb(s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
        self
    }

    pub fn bool(&mut self, b: bool) -> &mut Self {
        self.buf.push(u8::from(b));
        self
    }

    pub fn nat64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn blob(&mut self, b: &[u8]) -> &mut Self {
        self.leb(b.len() as u64);
        self.buf.extend_from_slice(b);
        self
    }

    /// The tag of an `opt`: 1 when present (write the value next), 0 when not.
    pub fn opt(&mut self, present: bool) -> &mut Self {
        self.buf.push(u8::from(present));
        self
    }

    pub fn opt_text(&mut self, s: Option<&str>) -> &mut Self {
        self.opt(s.is_some());
        if let Some(s) = s {
            self.text(s);
        }
        self
    }
}
