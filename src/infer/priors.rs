//! Move priors from a policy over board points.

use crate::game::Game;

/// Priors of `moves` in `state`, summing to 1: a softmax of the policy
/// logit at each move's [`Game::policy_index`]. Moves without a point, a
/// missing policy or a point outside it give equal priors to all moves.
pub fn priors<G: Game>(state: &G, moves: &[G::Move], policy: Option<&[f32]>) -> Vec<f32> {
    let n = moves.len();
    if n == 0 {
        return Vec::new();
    }
    let uniform = || vec![1.0 / n as f32; n];
    let Some(policy) = policy else {
        return uniform();
    };
    let mut logits = Vec::with_capacity(n);
    for &mv in moves {
        match state.policy_index(mv).and_then(|p| policy.get(p)) {
            Some(&l) if l.is_finite() => logits.push(l),
            _ => return uniform(),
        }
    }
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for l in &mut logits {
        *l = (*l - max).exp();
        sum += *l;
    }
    logits.iter_mut().for_each(|l| *l /= sum);
    logits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Arimaa, TicTacToe};

    #[test]
    fn softmax_over_the_legal_points() {
        let g = TicTacToe::new();
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let mut policy = vec![0.0f32; 9];
        policy[4] = 2.0f32.ln(); // the centre twice as likely as any other
        let p = priors(&g, &moves, Some(&policy));
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        let centre = moves.iter().position(|m| m.0 == 4).unwrap();
        assert!((p[centre] - 0.2).abs() < 1e-6, "{p:?}");
        let other = if centre == 0 { 1 } else { 0 };
        assert!((p[other] - 0.1).abs() < 1e-6);
    }

    #[test]
    fn no_policy_or_no_point_is_uniform() {
        let g = TicTacToe::new();
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        assert!(priors(&g, &moves, None).iter().all(|&p| p == 1.0 / 9.0));
        assert!(priors(&g, &moves, Some(&[1.0; 4]))
            .iter()
            .all(|&p| p == 1.0 / 9.0));
        let a = Arimaa::new();
        let mut moves = Vec::new();
        a.legal_moves(&mut moves);
        let p = priors(&a, &moves, Some(&[5.0; 64]));
        assert!(p.iter().all(|&x| x == 1.0 / moves.len() as f32));
    }
}
