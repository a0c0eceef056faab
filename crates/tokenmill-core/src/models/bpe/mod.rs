//! BPE: byte-pair encoding (classic with suffix/prefix, and byte-level).
