//! Training by evolution (Schaul & Schmidhuber, 2008): evolution strategies
//! over a model's flat weight vector with the fitness of games against a
//! fixed opponent (`plies evolve`), and host-parasite competitive
//! coevolution (`plies coevolve`).

pub mod strategy;

pub use strategy::{GenerationStats, Individual, Strategy, StrategyKind};
