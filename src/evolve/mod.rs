//! Training by evolution (Schaul & Schmidhuber, 2008): evolution strategies
//! over a model's flat weight vector with the fitness of games against a
//! fixed opponent (`plies evolve`), and host-parasite competitive
//! coevolution (`plies coevolve`).

pub mod coevolve;
mod error;
pub mod fitness;
pub mod run;
pub mod strategy;

pub use coevolve::{run_coevolve, CoevolveConfig, CoevolveReport};
pub use error::EvolveError;
pub use run::{run_evolve, EvolveConfig, EvolveReport, EvolveState};
pub use strategy::{GenerationStats, Individual, Strategy, StrategyKind};
