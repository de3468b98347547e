//! Reproductions of published experiments, end to end.

pub mod amazons;
pub mod amazons_value;
pub mod match_cache;
pub mod mdrnn;
pub mod pentago;
pub mod ttt;
