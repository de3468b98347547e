//! The search tree: nodes shared by all search threads.
//!
//! Statistics are atomics so threads update them without locks; a node's
//! children are created once, by the first thread that expands it
//! (`OnceLock`), and each child's own node is created the same way when a
//! thread first walks into it. A node's value sum is kept from the point
//! of view of the player who moved into it (the side to move at its
//! parent), so a parent picks the child with the best value for itself.

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::OnceLock;

/// Values are summed as integers in millionths so that `fetch_add` works.
const SCALE: f64 = 1e6;

/// Trees of at least this many visits are freed on another thread (see
/// [`discard`]).
const BIG_TREE: u32 = 1024;

/// Frees a tree that is no longer needed: a big one on the janitor thread
/// ([`crate::util::drop_later`]), so that an engine's answer does not wait
/// for tens of milliseconds of freeing; a small one here.
pub fn discard<M: Send + Sync + 'static>(root: Box<Node<M>>) {
    if root.visits() >= BIG_TREE {
        crate::util::drop_later(root);
    }
}

/// One position in the tree.
pub struct Node<M> {
    visits: AtomicU32,
    /// Sum of backed-up values for the player who moved here, in millionths.
    value_sum: AtomicI64,
    /// Threads currently below this node (virtual losses).
    in_flight: AtomicU32,
    children: OnceLock<Box<[Edge<M>]>>,
}

/// A move from a node, with its prior and (once visited) its node.
pub struct Edge<M> {
    pub mv: M,
    pub prior: f32,
    node: OnceLock<Box<Node<M>>>,
}

impl<M> Default for Node<M> {
    fn default() -> Self {
        Node {
            visits: AtomicU32::new(0),
            value_sum: AtomicI64::new(0),
            in_flight: AtomicU32::new(0),
            children: OnceLock::new(),
        }
    }
}

impl<M> Node<M> {
    pub fn visits(&self) -> u32 {
        self.visits.load(Ordering::Relaxed)
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Mean value for the player who moved here (0 when unvisited).
    pub fn mean(&self) -> f64 {
        let n = self.visits();
        if n == 0 {
            0.0
        } else {
            self.value_sum.load(Ordering::Relaxed) as f64 / SCALE / n as f64
        }
    }

    /// The mean with `virtual_loss` counted as a loss per thread in flight,
    /// which steers other threads elsewhere; `unvisited` when there is
    /// nothing to average.
    pub fn q(&self, virtual_loss: f64, unvisited: f64) -> f64 {
        let n = self.visits() as f64;
        let v = self.in_flight() as f64 * virtual_loss;
        if n + v == 0.0 {
            return unvisited;
        }
        (self.value_sum.load(Ordering::Relaxed) as f64 / SCALE - v) / (n + v)
    }

    pub fn add_in_flight(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// Records one visit worth `value` and removes a virtual loss if the
    /// visit had added one.
    pub fn record(&self, value: f64, had_in_flight: bool) {
        self.value_sum
            .fetch_add((value * SCALE).round() as i64, Ordering::Relaxed);
        self.visits.fetch_add(1, Ordering::Relaxed);
        if had_in_flight {
            self.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The children once expanded.
    pub fn children(&self) -> Option<&[Edge<M>]> {
        self.children.get().map(|c| &**c)
    }

    /// Expands the node with `edges` unless another thread did first;
    /// returns the children in place.
    pub fn expand(&self, edges: Vec<Edge<M>>) -> &[Edge<M>] {
        self.children.get_or_init(|| edges.into_boxed_slice())
    }

    /// Takes the node of the child played with `mv` out of the tree (for
    /// reuse as the next root), if it was created.
    pub fn take_child(&mut self, mv: &M) -> Option<Box<Node<M>>>
    where
        M: PartialEq,
    {
        let edges = self.children.get_mut()?;
        edges
            .iter_mut()
            .find(|e| e.mv == *mv)
            .and_then(|e| e.node.take())
    }

    /// Nodes in this subtree (this one included).
    pub fn size(&self) -> usize {
        1 + self
            .children()
            .map(|c| {
                c.iter()
                    .filter_map(|e| e.node())
                    .map(Node::size)
                    .sum::<usize>()
            })
            .unwrap_or(0)
    }
}

impl<M> Edge<M> {
    pub fn new(mv: M, prior: f32) -> Self {
        Edge {
            mv,
            prior,
            node: OnceLock::new(),
        }
    }

    /// The child's node, if a thread has walked into it.
    pub fn node(&self) -> Option<&Node<M>> {
        self.node.get().map(|n| &**n)
    }

    /// The child's node, created on first use.
    pub fn node_or_create(&self) -> &Node<M> {
        self.node.get_or_init(Box::default)
    }

    pub fn visits(&self) -> u32 {
        self.node().map_or(0, Node::visits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_and_virtual_loss() {
        let n: Node<u8> = Node::default();
        assert_eq!(n.q(1.0, 0.25), 0.25);
        n.add_in_flight();
        assert_eq!(n.q(1.0, 0.25), -1.0);
        n.record(0.5, true);
        assert_eq!(n.in_flight(), 0);
        assert!((n.mean() - 0.5).abs() < 1e-9);
        n.add_in_flight();
        assert!((n.q(1.0, 0.0) - (0.5 - 1.0) / 2.0).abs() < 1e-9);
    }

    #[test]
    fn expansion_happens_once_and_children_can_be_taken() {
        let mut n: Node<u8> = Node::default();
        let first = n.expand(vec![Edge::new(1, 0.5), Edge::new(2, 0.5)]).len();
        let second = n.expand(vec![Edge::new(3, 1.0)]).len();
        assert_eq!((first, second), (2, 2));
        n.children().unwrap()[1].node_or_create().record(1.0, false);
        assert_eq!(n.size(), 2);
        let child = n.take_child(&2).unwrap();
        assert_eq!(child.visits(), 1);
        assert!(n.take_child(&1).is_none());
    }
}
