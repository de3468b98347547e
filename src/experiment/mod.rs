//! Reproductions of published experiments, end to end.

pub mod mdrnn;
pub mod ttt;
