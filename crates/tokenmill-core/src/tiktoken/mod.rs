//! tiktoken (filled in by its owner; see the module docs once written).
