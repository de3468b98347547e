//! Reproductions of published experiments, end to end.

pub mod mdrnn;
pub mod pentago;
pub mod ttt;
