//! (builtin helper)
