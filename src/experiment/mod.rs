//! Reproductions of published experiments, end to end.

pub mod ttt;
