//! Integration tests: one backend trait over PocketIC and the local IC host, end-to-end scenarios, benchmarks.
