//! Size bounds on resolved forms. A form over any of them is refused whole.

/// Bytes of form JSON.
pub const MAX_FORM_BYTES: usize = 256 * 1024;
/// Methods in one form.
pub const MAX_METHODS: usize = 256;
/// Named types in one form.
pub const MAX_TYPES: usize = 256;
/// Nesting of type nodes (a field inside a record inside an opt is depth 3).
pub const MAX_TYPE_DEPTH: usize = 32;
/// Type nodes in one form, all methods and types together.
pub const MAX_NODES: usize = 20_000;
/// Fields of one record or cases of one variant.
pub const MAX_FIELDS: usize = 256;
/// Characters of one `describe` or `intent` text.
pub const MAX_TEXT_CHARS: usize = 1024;
/// Characters of a method, type, field or set name.
pub const MAX_NAME_CHARS: usize = 128;
/// Name sets in one form.
pub const MAX_NAME_SETS: usize = 64;
/// Outcome keys of one method.
pub const MAX_OUTCOME_KEYS: usize = 64;
