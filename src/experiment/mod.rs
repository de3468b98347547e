//! Reproductions of published experiments, end to end.

pub mod pentago;
pub mod ttt;
