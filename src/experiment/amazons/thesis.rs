//! The figures Fugers (2017) reports, quoted beside the measured ones:
//! figure 15's test errors and tables 4 and 5's equities, and which of the
//! study's evaluators each figure belongs to.

/// The thesis' figure 15: test error of the hand evaluators and the
/// networks' range (best BITS-160, worst UNITS-80).
pub const THESIS_ERRORS: [(&str, f64); 3] =
    [("lieberum", 0.24), ("mindist", 0.25), ("random", 0.50)];
pub const THESIS_NET_ERRORS: (f64, f64) = (0.37, 0.38);

/// The thesis' tables 4 (against good) and 5 (against simple): equity
/// with no lookahead, alpha-beta, MCTS.
pub const THESIS_VS_GOOD: [(&str, [f64; 3]); 4] = [
    ("lieberum", [-0.94, -0.02, -0.76]),
    ("mindist", [-0.98, -0.68, -0.98]),
    ("random", [-1.00, -1.00, -1.00]),
    ("network", [-1.00, -1.00, -1.00]),
];
pub const THESIS_VS_SIMPLE: [(&str, [f64; 3]); 12] = [
    ("lieberum", [0.42, 0.98, 0.78]),
    ("mindist", [0.00, 0.82, 0.44]),
    ("random", [-1.00, -0.98, -1.00]),
    ("UNITS-40", [-0.92, -0.86, -0.70]),
    ("UNITS-80", [-1.00, -0.84, -0.68]),
    ("UNITS-160", [-0.96, -0.86, -0.72]),
    ("MOBILITY-40", [-0.92, -0.80, -0.50]),
    ("MOBILITY-80", [-0.92, -0.76, -0.70]),
    ("MOBILITY-160", [-0.92, -0.88, -0.78]),
    ("BITS-40", [-0.94, -0.86, -0.66]),
    ("BITS-80", [-0.96, -0.90, -0.84]),
    ("BITS-160", [-0.96, -0.90, -0.78]),
];

/// The searches of tables 4 and 5, in their column order.
pub const SEARCHES: [&str; 3] = ["no lookahead", "alpha-beta", "MCTS"];

/// Whether `name` is one of the thesis' networks (UNITS, MOBILITY, BITS),
/// whose figures the tables quote.
pub(super) fn is_thesis_net(name: &str) -> bool {
    ["UNITS-", "MOBILITY-", "BITS-"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The thesis' equity for `evaluator` with search column `s` against
/// `opponent`, where it has one.
pub(super) fn thesis_equity(evaluator: &str, s: usize, opponent: &str) -> Option<f64> {
    if opponent == "good" {
        let key = if is_thesis_net(evaluator) {
            "network"
        } else {
            evaluator
        };
        THESIS_VS_GOOD
            .iter()
            .find(|(n, _)| *n == key)
            .map(|(_, v)| v[s])
    } else {
        THESIS_VS_SIMPLE
            .iter()
            .find(|(n, _)| *n == evaluator)
            .map(|(_, v)| v[s])
    }
}
