//! The AEI loop driven in-process, line by line, as a controller would.
//!
//! | file | subject |
//! | --- | --- |
//! | `driver.rs` | an engine on a thread, fed and read through channels |
//! | `fixtures.rs` | seeded Arimaa checkpoints and a position with a free capture |
//! | `session.rs` | the handshake, whole games, positions, garbled input, the end of input |
//! | `search_control.rs` | `stop`, `makemove` during a search, pondering, the clock |
//! | `checkpoints.rs` | players with a checkpoint as evaluator, and bad checkpoints |
//! | `mcts.rs` | MCTS: its tree kept through `makemove`, `stop`, the clock |
//! | `players.rs` | every player kind on the free capture, and what it reports |

mod checkpoints;
mod driver;
mod fixtures;
mod mcts;
mod players;
mod search_control;
mod session;
